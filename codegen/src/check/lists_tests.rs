use crate::testutil::errors;

const ITEM: &str = "pub struct Port {\n    pub name: String,\n    pub note: Option<String>,\n}\n";

fn with_field(markers: &str, ty: &str) -> Vec<String> {
    errors(&format!(
        "{ITEM}pub struct Spec {{\n{markers}\n    pub items: {ty},\n}}\n"
    ))
}

#[test]
fn a_map_list_keyed_by_a_required_field_is_accepted() {
    let markers = "    /// +kubegen:listType=map\n    /// +kubegen:listMapKeys=name";
    assert_eq!(with_field(markers, "Vec<Port>"), Vec::<String>::new());
}

#[test]
fn a_map_list_of_conditions_keyed_by_type_is_accepted() {
    let markers = "    /// +kubegen:listType=map\n    /// +kubegen:listMapKeys=type";
    assert_eq!(
        with_field(markers, "Option<Vec<Condition>>"),
        Vec::<String>::new()
    );
}

#[test]
fn a_map_key_must_be_a_required_field_of_the_item() {
    let markers = "    /// +kubegen:listType=map\n    /// +kubegen:listMapKeys=note,nope";
    assert_eq!(
        with_field(markers, "Vec<Port>"),
        [
            "8: list map key `note` of `items` is optional and has no default",
            "8: list map key `nope` of `items` is not a field of the item type",
        ]
    );
}

#[test]
fn a_well_known_item_key_must_be_required_upstream() {
    let markers = "    /// +kubegen:listType=map\n    /// +kubegen:listMapKeys=observedGeneration";
    assert_eq!(
        with_field(markers, "Vec<Condition>"),
        ["8: list map key `observedGeneration` of `items` is optional and has no default"]
    );
}

#[test]
fn a_map_list_needs_keys_and_keys_need_a_map_list() {
    assert_eq!(
        with_field("    /// +kubegen:listType=map", "Vec<Port>"),
        ["7: `+kubegen:listType=map` on `items` without keys"]
    );
    assert_eq!(
        with_field("    /// +kubegen:listMapKeys=name", "Vec<Port>"),
        ["7: `+kubegen:listMapKeys` on `items` needs `+kubegen:listType=map`"]
    );
}

#[test]
fn a_set_holds_scalars_and_list_markers_need_a_list() {
    assert_eq!(
        with_field("    /// +kubegen:listType=set", "Vec<String>"),
        Vec::<String>::new()
    );
    assert_eq!(
        with_field("    /// +kubegen:listType=set", "Vec<Port>"),
        ["7: `+kubegen:listType=set` on `items`, whose items are not scalars"]
    );
    assert_eq!(
        with_field("    /// +kubegen:listType=atomic", "String"),
        ["7: `+kubegen:listType`/`listMapKeys` on field `items`, which is not a list"]
    );
}
