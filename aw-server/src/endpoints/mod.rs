//! The `/api/0/` endpoints of `docs/API.md` §3 and `/metrics`, one file
//! per resource, and [`routes`], which lists them. The helpers they share (reading JSON
//! bodies, parsing query parameters, running datastore calls off the async
//! executor) are `request.rs`'s, the query threads `background.rs`'s.
//!
//! Handlers translate between HTTP and the datastore/query crates and
//! nothing more: merge rules, clipping and the query language live there.

pub mod alerts;
mod background;
pub mod backup;
pub mod buckets;
pub mod database;
pub mod events;
pub mod export;
pub mod forward;
pub mod groups;
pub mod heartbeat;
pub mod hosts;
pub mod import;
pub mod info;
pub mod metrics;
pub mod openapi;
pub mod privacy;
pub mod query;
mod request;
pub mod settings;
pub mod summary;
pub mod sync;
pub mod tokens;
pub mod users;

use rocket::Route;

pub use background::background;
pub use request::{blocking, read_json, Empty, JSON_LIMIT};

/// Every API route.
pub fn routes() -> Vec<Route> {
    rocket::routes![
        info::info,
        openapi::openapi,
        buckets::list,
        buckets::get,
        buckets::create,
        buckets::update,
        buckets::delete,
        events::list,
        events::insert,
        events::count,
        events::get,
        events::delete,
        events::delete_range,
        heartbeat::heartbeat,
        export::export_all,
        export::export_bucket,
        import::import,
        query::query,
        summary::summary,
        summary::preview,
        summary::search,
        settings::list,
        settings::get,
        settings::set,
        settings::delete,
        privacy::apply,
        privacy::vacuum,
        backup::backup,
        backup::status,
        database::status,
        database::retention,
        sync::status,
        sync::run,
        hosts::list,
        hosts::rename,
        hosts::merge,
        hosts::alias,
        hosts::unalias,
        forward::devices,
        forward::states,
        forward::receive,
        forward::forget,
        forward::rename,
        tokens::access,
        tokens::list,
        tokens::add,
        tokens::revoke,
        alerts::status,
        alerts::test,
        alerts::digest,
        users::list,
        users::add,
        users::remove,
        users::nodes,
        users::freeze,
        users::thaw,
        users::file,
        users::receive,
        groups::list,
        groups::create,
        groups::invite,
        groups::join,
        groups::leave,
        groups::totals,
        metrics::metrics,
    ]
}
