//! +groupName={{group}}
//!
//! The `{{group}}` API group, version `{{version}}`: the kinds this operator owns.

mod {{kind_snake}};
