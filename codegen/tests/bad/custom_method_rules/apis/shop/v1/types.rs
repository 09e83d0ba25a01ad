/// An order.
///
/// +genclient
/// +genclient:method=ListItems,verb=list,subresource=items
/// +genclient:method=Approve,verb=update,input=Approval
/// +genclient:method=Get,verb=get,subresource=summary
pub struct Order {
    pub metadata: ObjectMeta,
}
