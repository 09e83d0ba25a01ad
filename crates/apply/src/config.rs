//! [`Config`]: the configuration of an apply (apiserver `fieldmanager` holding the decoded patch
//! object). Decoding the request body and checking it against the URL are the server's.

use serde_json::Value;

/// An apply's configuration: the object the applier wants, and how errors name it.
#[derive(Clone, Debug)]
pub struct Config {
    pub(crate) value: Value,
    /// `namespace/name; group/version, Kind=kind` as sent, for [`crate::Error::UntypedConfiguration`].
    pub(crate) ident: String,
}

impl Config {
    /// The configuration `value` (an object), named `ident` in errors: `namespace/name;
    /// group/version, Kind=kind` of the object as the request sent it, as v1.36 names it
    /// (`/x; apps/v1, Kind=Deployment` for a configuration without a namespace).
    pub fn new(value: Value, ident: String) -> Config {
        Config { value, ident }
    }

    /// The configuration as sent.
    pub fn value(&self) -> &Value {
        &self.value
    }
}
