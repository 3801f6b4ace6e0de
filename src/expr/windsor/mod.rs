//! Windsor's own functions, registered on top of expr-lang's builtins. One file per
//! family; `args` holds the argument checks they share.

mod args;
mod cidr;
mod env;
mod files;
pub(crate) mod format;
mod json;
pub(crate) mod jsonnet;
mod terraform_output;
mod text;
mod yaml;

use super::native::NativeFn;

/// Every Windsor host function with its Go signature. `string` and `split` replace
/// the builtins of the same names; the engine drops `terraform_output` unless its
/// configuration registers it.
pub fn functions() -> &'static [NativeFn] {
    &[
        text::STRING,
        text::SPLIT,
        yaml::YAML,
        yaml::YAML_STRING,
        json::JSON_STRING,
        cidr::CIDRHOST,
        cidr::CIDRSUBNET,
        cidr::CIDRSUBNETS,
        cidr::CIDRNETMASK,
        files::FILE,
        jsonnet::JSONNET,
        env::ENV,
        terraform_output::TERRAFORM_OUTPUT,
    ]
}
