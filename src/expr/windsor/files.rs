//! `file(path)`: a file's contents as a string, read through the host, which resolves
//! the path relative to the expression's file and refuses paths leaving its root.

use super::args;
use crate::expr::native::{Call, NativeError, NativeFn, Signature, Ty};
use crate::value::Value;

pub const FILE: NativeFn = NativeFn {
    name: "file",
    sigs: &[Signature {
        params: &[Ty::Str],
        variadic: None,
        ret: Ty::Str,
    }],
    call: file,
};

fn file(call: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    let path = args::string(args.first().unwrap_or(&Value::Nil), "file() path")?;
    let (_, bytes) = call.host.read_file(path).map_err(|e| {
        // The host's reason may start with the path as written; name it once.
        let reason = e
            .strip_prefix(path)
            .and_then(|rest| rest.strip_prefix(": "))
            .unwrap_or(&e);
        NativeError::run(format!("failed to read file {path}: {reason}"))
    })?;
    // Go strings hold any bytes; ours are UTF-8, so invalid sequences become U+FFFD.
    Ok(Value::from(String::from_utf8_lossy(&bytes).into_owned()))
}
