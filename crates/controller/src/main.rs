//! `image-police`: deletes Deployments that run images not on their namespace's WhiteList.

fn main() {}
