/// A pool of workers with a scale subresource.
///
/// +genclient
/// +genclient:method=GetScale,verb=get,subresource=scale,result=Scale
/// +genclient:method=UpdateScale,verb=update,subresource=scale,input=Scale,result=Scale
/// +genclient:method=CreateEviction,verb=create,subresource=eviction,input=k8s_openapi::api::policy::v1::Eviction,result=WorkerPool
pub struct WorkerPool {
    pub metadata: ObjectMeta,
    /// Wanted workers.
    pub spec: WorkerPoolSpec,
    /// Observed workers.
    pub status: Option<WorkerPoolStatus>,
}

/// Wanted workers.
pub struct WorkerPoolSpec {
    /// How many.
    pub replicas: i32,
}

/// Observed workers.
pub struct WorkerPoolStatus {
    /// How many run.
    pub ready: Option<i32>,
}

/// The scale subresource body.
pub struct Scale {
    /// Wanted replicas.
    pub replicas: i32,
}
