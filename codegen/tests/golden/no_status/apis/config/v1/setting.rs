/// A setting whose `status` is an ordinary field, written by whoever writes the object.
///
/// +genclient
/// +genclient:noStatus
pub struct Setting {
    pub metadata: ObjectMeta,
    /// The value.
    pub spec: SettingSpec,
    /// Free-form notes; no status subresource.
    pub status: Option<SettingSpec>,
}

/// The value.
pub struct SettingSpec {
    /// Value text.
    pub value: String,
}
