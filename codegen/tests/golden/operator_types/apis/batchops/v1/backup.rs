/// A scheduled backup.
///
/// +genclient
pub struct Backup {
    pub metadata: ObjectMeta,
    /// What to back up and how often.
    pub spec: BackupSpec,
    /// What the operator observed.
    pub status: Option<BackupStatus>,
}

/// What to back up and how often.
///
/// +kubegen:validation:XValidation:rule="self.minKeep <= self.maxKeep",message="minKeep must not exceed maxKeep"
pub struct BackupSpec {
    /// Which pods to back up.
    pub selector: LabelSelector,
    /// How often.
    pub every: Option<Duration>,
    /// Where the backup goes.
    pub target: Target,
    /// Backups kept at least.
    pub min_keep: i32,
    /// Backups kept at most.
    pub max_keep: i32,
    /// Extra tools' settings, kept as written.
    pub extra: Option<serde_json::Value>,
    /// An encryption key.
    pub key: Vec<u8>,
    /// Tags, each once.
    /// +kubegen:optional
    /// +kubegen:listType=set
    /// +kubegen:validation:maxItems=10
    pub tags: Vec<String>,
    /// The secret holding credentials.
    pub credentials: Option<LocalObjectReference>,
}

/// Where a backup goes.
pub enum Target {
    /// An S3 bucket.
    /// +kubegen:value=s3
    S3,
    /// A persistent volume.
    /// +kubegen:value=volume
    Volume,
}

/// What the operator observed.
pub struct BackupStatus {
    /// Where the last run is.
    pub phase: Option<Phase>,
    /// When the last run started.
    pub last_run: Option<MicroTime>,
    /// Observations, one per type.
    /// +kubegen:optional
    /// +kubegen:listType=map
    /// +kubegen:listMapKeys=type
    pub conditions: Vec<Condition>,
}

pub enum Phase {
    Idle,
    Running,
    Failed,
}
