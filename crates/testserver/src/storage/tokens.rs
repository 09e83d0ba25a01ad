//! The tokens the TokenRequest API issued (`crate::handlers::token`), which authentication
//! (`crate::authn`) accepts: server state, like the signing key of a real server.

use std::collections::HashMap;

use jiff::Timestamp;
use parking_lot::Mutex;

/// A token the server issued for a ServiceAccount.
#[derive(Clone, Debug)]
pub(crate) struct Issued {
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) uid: String,
    pub(crate) expires: Timestamp,
}

/// Tokens issued by the TokenRequest API, by token.
#[derive(Debug, Default)]
pub(crate) struct IssuedTokens {
    pub(crate) tokens: Mutex<HashMap<String, Issued>>,
}
