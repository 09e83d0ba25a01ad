/// Fish: the plural is the singular.
///
/// +genclient
/// +kubegen:plural=fish
pub struct Fish {
    pub metadata: ObjectMeta,
    /// Spec.
    pub spec: AnimalSpec,
}

/// Regular `-ies` plural.
///
/// +genclient
pub struct Butterfly {
    pub metadata: ObjectMeta,
    /// Spec.
    pub spec: AnimalSpec,
}

/// A plural unrelated to the kind name.
///
/// +genclient
/// +kubegen:plural=people
/// +kubegen:singular=person
pub struct Person {
    pub metadata: ObjectMeta,
    /// Spec.
    pub spec: AnimalSpec,
}

/// Spec.
pub struct AnimalSpec {
    /// Name.
    pub name: String,
}
