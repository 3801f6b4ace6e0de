//! `terraform_output(component, key)` in the three modes the host can configure
//! (tests/conformance/expr/README.md, "Options"; docs/semantics.md S7).

use super::args;
use crate::expr::host::TerraformOutputs;
use crate::expr::native::{Call, NativeError, NativeFn, Signature, Ty};
use crate::value::Value;

pub const TERRAFORM_OUTPUT: NativeFn = NativeFn {
    name: "terraform_output",
    sigs: &[Signature {
        params: &[Ty::Str, Ty::Str],
        variadic: None,
        ret: Ty::Any,
    }],
    call: terraform_output,
};

fn terraform_output(call: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    let (Some(component), Some(key)) = (args.first(), args.get(1)) else {
        return Err(NativeError::run("terraform_output() requires 2 arguments"));
    };
    let component = args::string(component, "terraform_output() component")?;
    let key = args::string(key, "terraform_output() key")?;
    let outputs = call.host.terraform_outputs();
    if let TerraformOutputs::Mocked(_, reads) = outputs {
        reads.record(component, call.host.current_file());
    }
    lookup(outputs, component, key)
}

fn lookup(outputs: &TerraformOutputs, component: &str, key: &str) -> Result<Value, NativeError> {
    match outputs {
        // The engine registers the function only with outputs configured; a host
        // without them behaves as Windsor does without a provider.
        TerraformOutputs::Unregistered => Err(NativeError::run(
            "terraform_output is not available: no Terraform outputs are configured",
        )),
        // `windsor test`: whatever was mocked, nil for anything else (so `?? fallback`
        // applies); reading a component the blueprint lacks fails the case later.
        TerraformOutputs::Mocked(all, _) => Ok(outputs_of(all, component)
            .and_then(|outputs| outputs.get(key))
            .cloned()
            .unwrap_or(Value::Nil)),
        // `bpc test` (S11): a case that mocks outputs must mock every one it reads;
        // a silent null would let a misspelt component pass unnoticed.
        TerraformOutputs::Strict(all) => match outputs_of(all, component) {
            None => Err(NativeError::run(format!(
                "terraform_output('{component}', '{key}'): the case mocks no outputs for component `{component}` (terraformOutputs has: {})",
                mocked_components(all)
            ))),
            Some(outputs) => outputs.get(key).cloned().ok_or_else(|| {
                NativeError::run(format!(
                    "terraform_output('{component}', '{key}'): the case mocks component `{component}` but not its output `{key}`"
                ))
            }),
        },
        // Composition time: the text stays for apply time to resolve.
        TerraformOutputs::Deferred => Err(NativeError::deferred(format!(
            "terraform output '{key}' for component {component} is deferred"
        ))),
        // Real outputs: a component without outputs gives nil, a missing key fails.
        TerraformOutputs::Provider(all) => match outputs_of(all, component) {
            None => Ok(Value::Nil),
            Some(outputs) if outputs.is_empty() => Ok(Value::Nil),
            Some(outputs) => outputs.get(key).cloned().ok_or_else(|| {
                NativeError::run(format!(
                    "terraform output key '{key}' not found for component '{component}'"
                ))
            }),
        },
    }
}

fn mocked_components(all: &Value) -> String {
    match all.as_map() {
        Some(m) if !m.is_empty() => m
            .keys()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => "nothing".to_string(),
    }
}

fn outputs_of<'a>(all: &'a Value, component: &str) -> Option<&'a crate::expr::Map> {
    all.as_map()?.get(component)?.as_map()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::native::NativeErrorKind;
    use crate::expr::Map;

    fn outputs() -> Value {
        let mut network = Map::default();
        network.insert("id".into(), Value::from("net-1"));
        let mut all = Map::default();
        all.insert("network".into(), Value::map(network));
        all.insert("empty".into(), Value::map(Map::default()));
        Value::map(all)
    }

    #[test]
    fn mocked_gives_nil_for_anything_missing() {
        let mocked = TerraformOutputs::Mocked(outputs(), Default::default());
        assert_eq!(
            lookup(&mocked, "network", "id")
                .ok()
                .and_then(|v| v.as_str().map(String::from)),
            Some("net-1".into())
        );
        assert!(matches!(lookup(&mocked, "network", "nope"), Ok(Value::Nil)));
        assert!(matches!(lookup(&mocked, "nope", "id"), Ok(Value::Nil)));
    }

    #[test]
    fn provider_fails_on_missing_key_only() {
        let provider = TerraformOutputs::Provider(outputs());
        assert!(matches!(lookup(&provider, "empty", "x"), Ok(Value::Nil)));
        assert!(matches!(lookup(&provider, "absent", "x"), Ok(Value::Nil)));
        let err = lookup(&provider, "network", "nope")
            .err()
            .map(|e| (e.kind, e.message));
        assert_eq!(
            err,
            Some((
                NativeErrorKind::Run,
                "terraform output key 'nope' not found for component 'network'".into()
            ))
        );
    }

    #[test]
    fn deferred_always_defers() {
        let err = lookup(&TerraformOutputs::Deferred, "network", "id")
            .err()
            .map(|e| e.kind);
        assert_eq!(err, Some(NativeErrorKind::Deferred));
    }
}
