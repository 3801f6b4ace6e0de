// TEMPORARY STUB
use super::*;
pub struct EngineConfig {
    pub terraform_output: bool,
}
pub struct Engine;
impl Engine {
    pub fn new(_c: EngineConfig) -> Engine {
        Engine
    }
    pub fn eval(&self, _s: &str, _sc: &dyn Scope, _h: &dyn host::Host) -> Result<Value, ExprError> {
        Ok(Value::Nil)
    }
    pub fn render_template(
        &self,
        _s: &str,
        _sc: &dyn Scope,
        _h: &dyn host::Host,
    ) -> Result<Value, ExprError> {
        Ok(Value::Nil)
    }
}
