//! Stage 3: the rules of scan that types alone do not enforce. Each rule is one small
//! function; `lower` calls them as it builds a scan node, where the types they need are
//! known, and reports every violation (not only the first).

pub mod scan;
