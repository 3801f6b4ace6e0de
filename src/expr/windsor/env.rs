//! `env(name)`: an environment variable from the host, nil when unset (so it composes
//! with `??`). The host decides which environment that is (hermetic in tests).

use super::args;
use crate::expr::native::{Call, NativeError, NativeFn, Signature, Ty};
use crate::value::Value;

pub const ENV: NativeFn = NativeFn {
    name: "env",
    sigs: &[Signature {
        params: &[Ty::Str],
        variadic: None,
        ret: Ty::Any,
    }],
    call: env,
};

fn env(call: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    let name = args::string(args.first().unwrap_or(&Value::Nil), "env() argument")?;
    Ok(call.host.env_var(name).map_or(Value::Nil, Value::from))
}
