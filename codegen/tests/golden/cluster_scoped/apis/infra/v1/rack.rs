/// A server rack; racks belong to no namespace.
///
/// +genclient
/// +genclient:nonNamespaced
pub struct Rack {
    pub metadata: ObjectMeta,
    /// Wanted state.
    pub spec: RackSpec,
    /// Observed state.
    pub status: Option<RackStatus>,
}

/// Wanted state.
pub struct RackSpec {
    /// Height units.
    pub units: i32,
}

/// Observed state.
pub struct RackStatus {
    /// Used units.
    pub used: Option<i32>,
}
