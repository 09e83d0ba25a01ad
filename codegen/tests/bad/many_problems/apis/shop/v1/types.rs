/// An order.
///
/// +genclient
/// +genclient:readonly
/// +genclient:onlyVerbs=get
/// +kubegen:printcolumn:name=Age,type=time,jsonPath=.metadata.creationTimestamp
pub struct Order {
    pub metadata: ObjectMeta,
    /// Lines.
    pub lines: Vec<Line>,
    /// Note.
    /// +kubegen:validation:Minimum=3
    pub note: String,
}

/// Not a kind, yet tagged.
///
/// +kubegen:plural=things
pub struct Thing {
    /// Name.
    pub name: String,
}

enum Color { Red, Rgb(u8, u8, u8) }

fn helper() {}
