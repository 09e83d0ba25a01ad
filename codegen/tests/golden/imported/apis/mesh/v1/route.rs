/// A route another project owns, as `kubegen import` writes it.
///
/// +genclient
pub struct Route {
    pub metadata: ObjectMeta,
    pub spec: Option<RouteSpec>,
}

pub struct RouteSpec {
    /// Weight of the route; `null` leaves it to the mesh.
    pub weight: Option<Option<i32>>,
    pub backends: Option<Vec<RouteSpecBackends>>,
    /// +kubegen:json=unknownFields
    pub unknown_fields_2: Option<String>,
}

pub struct RouteSpecBackends {
    pub name: String,
    /// +kubegen:default=80
    pub port: Option<i32>,
}
