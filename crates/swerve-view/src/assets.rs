//! The page, script and style sheet, embedded in the binary: the server sends them as
//! they are, and [`crate::export`] writes them next to the data.

/// The page: a shell that loads `app.css` and `app.js`.
pub const INDEX_HTML: &str = include_str!("assets/index.html");
/// The whole viewer: routing, rendering, charts, live updates.
pub const APP_JS: &str = include_str!("assets/app.js");
/// The style sheet.
pub const APP_CSS: &str = include_str!("assets/app.css");
