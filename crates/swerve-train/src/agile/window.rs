//! The reasoning window of a trajectory: the one given (`--window`, parsed by
//! [`WindowPolicy`]'s `FromStr`), or the N the run recorded in its header
//! (`extra.reasoning_window`). A range draws N per trajectory with the agent's
//! own seeded draw ([`WindowPolicy::resolve`]), so an export gives a trajectory the same N
//! every time.

use anyhow::{Result, bail};
use swerve_agent::agile::{Window, WindowPolicy};
use swerve_core::trajectory::Header;

/// The window of the trajectory with `header`: `given` (a range drawn from `seed` and the
/// trajectory id), else the N its run recorded.
pub fn of(given: Option<WindowPolicy>, seed: u64, header: &Header) -> Result<Window> {
    if let Some(policy) = given {
        return Ok(policy.resolve(seed, &header.id));
    }
    match header.extra.get("reasoning_window").map(|n| n.as_u64()) {
        Some(Some(n)) => Ok(Window::Last(n as usize)),
        Some(None) => bail!(
            "header field extra.reasoning_window must be a number of turns, found {}",
            header.extra["reasoning_window"]
        ),
        None => bail!(
            "no reasoning window recorded (header field extra.reasoning_window: the run's \
             window was \"interleaved\" or the trajectory was imported); give --window N"
        ),
    }
}

/// The window's N; `None` for every turn (written `null`).
pub fn turns(window: Window) -> Option<usize> {
    match window {
        Window::All => None,
        Window::Last(n) => Some(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_window_wins_and_a_range_is_drawn_per_trajectory() {
        let mut header = Header::new("calc__0", "calc");
        assert!(
            of(None, 0, &header)
                .unwrap_err()
                .to_string()
                .contains("--window N")
        );
        header.extra.insert("reasoning_window".into(), 2.into());
        assert_eq!(of(None, 0, &header).unwrap(), Window::Last(2));
        assert_eq!(
            of(Some(WindowPolicy::Interleaved), 0, &header).unwrap(),
            Window::All
        );
        let range = WindowPolicy::Random { min: 1, max: 4 };
        assert_eq!(
            of(Some(range), 7, &header).unwrap(),
            range.resolve(7, "calc__0")
        );
        header.extra.insert("reasoning_window".into(), "x".into());
        let error = of(None, 0, &header).unwrap_err().to_string();
        assert!(error.contains("extra.reasoning_window"), "{error}");
    }
}
