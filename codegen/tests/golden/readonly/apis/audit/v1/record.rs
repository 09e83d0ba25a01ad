/// An audit record: clients only read them.
///
/// +genclient
/// +genclient:readonly
pub struct Record {
    pub metadata: ObjectMeta,
    /// What happened.
    pub spec: RecordSpec,
}

/// An append-only log entry.
///
/// +genclient
/// +genclient:skipVerbs=update,patch,deleteCollection
pub struct Entry {
    pub metadata: ObjectMeta,
    /// What happened.
    pub spec: RecordSpec,
}

/// What happened.
pub struct RecordSpec {
    /// Who did it.
    pub user: String,
    /// When.
    pub at: Option<Time>,
}
