//! A credential for a registry, as the lookup found it (`auth`, `cred_helper`).

/// What the lookup found. No `Debug`: it holds secrets.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    Anonymous,
    Basic(String, String),
    /// A Docker `identitytoken`, sent as a bearer token.
    Token(String),
}
