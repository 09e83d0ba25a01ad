/// A delivery region (cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub struct Region {
    pub metadata: ObjectMeta,
    /// Region settings.
    pub spec: RegionSpec,
}

/// Region settings.
pub struct RegionSpec {
    /// Display name.
    pub display_name: String,
}
