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
    /// +kubegen:default="volume"
    pub target: Target,
    /// Backups kept at least.
    /// +kubegen:default=1
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
    /// +kubegen:validation:MaxItems=10
    pub tags: Vec<String>,
    /// The secret holding credentials.
    pub credentials: Option<LocalObjectReference>,
    /// How to retry; an object default, merged with the nested defaults.
    /// +kubegen:default={"limit": 5, "share": 0.25}
    pub retry: Option<Retry>,
    /// Per-tool timeouts in seconds.
    /// +kubegen:default={"dump": 60}
    /// +kubegen:optional
    pub timeouts: BTreeMap<String, i64>,
}

/// How to retry a failed backup.
pub struct Retry {
    /// Attempts at most.
    /// +kubegen:validation:Minimum=0
    pub limit: i32,
    /// Wait between attempts.
    /// +kubegen:default="30s"
    pub backoff: Option<IntOrString>,
    /// Share of the nodes used, above 0 and below 1.
    /// +kubegen:validation:Minimum=0
    /// +kubegen:validation:ExclusiveMinimum=true
    /// +kubegen:validation:Maximum=1
    /// +kubegen:validation:ExclusiveMaximum=true
    /// +kubegen:default=0.5
    pub share: f64,
    /// Scheduling priority; below zero yields to other backups.
    /// +kubegen:default=-1
    pub priority: Option<i64>,
    /// Give up after this many seconds; `null` says never, absent says the operator's default.
    pub deadline_seconds: Option<Option<i64>>,
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
