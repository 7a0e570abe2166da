//! [`WindowPolicy`]: the configured reasoning window (`agent.reasoning.window`), and the
//! seeded draw that fixes a random window once per trajectory.
//!
//! In TOML the window is one value, so a later configuration layer replaces it whole:
//! `"interleaved"`, `"current_step"`, a number of turns `N`, or a range `[a, b]` from
//! which N is drawn uniformly per trajectory.

use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use swerve_core::seeded::draw;

use super::context::Window;

/// Which earlier assistant turns keep their reasoning, as configured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WindowPolicy {
    /// Every turn keeps it (`"interleaved"`).
    #[default]
    Interleaved,
    /// No earlier turn keeps it (`"current_step"`; the same as `0`).
    CurrentStep,
    /// The last N turns keep it (`N`, SWE-AGILE's `last_n_reasoning`).
    Last(u32),
    /// N is drawn uniformly from `min..=max` once per trajectory (`[min, max]`).
    Random {
        /// The smallest N.
        min: u32,
        /// The largest N.
        max: u32,
    },
}

impl WindowPolicy {
    /// The window of the trajectory `trajectory_id`: a random window's N is drawn from
    /// `seed` and the id, so the same configuration gives a trajectory the same N on every
    /// run.
    pub fn resolve(self, seed: u64, trajectory_id: &str) -> Window {
        match self {
            Self::Interleaved => Window::All,
            Self::CurrentStep => Window::Last(0),
            Self::Last(n) => Window::Last(n as usize),
            Self::Random { min, max } => Window::Last(draw(seed, trajectory_id, min, max) as usize),
        }
    }
}

/// A window as written on the command line: `N`, `a..b` (a range to draw N from),
/// `interleaved` or `current_step`.
impl std::str::FromStr for WindowPolicy {
    type Err = String;

    fn from_str(text: &str) -> Result<WindowPolicy, String> {
        let number = |part: &str| {
            part.trim()
                .parse::<u32>()
                .map_err(|_| format!("{part:?} is not a number of turns"))
        };
        match text.trim() {
            "interleaved" => Ok(WindowPolicy::Interleaved),
            "current_step" => Ok(WindowPolicy::CurrentStep),
            range if range.contains("..") => {
                let (min, max) = range.split_once("..").unwrap_or_default();
                let (min, max) = (number(min)?, number(max.trim_start_matches('='))?);
                if min > max {
                    return Err(format!(
                        "the range {min}..{max} is empty: write a..b with a <= b"
                    ));
                }
                Ok(WindowPolicy::Random { min, max })
            }
            n => number(n)
                .map(WindowPolicy::Last)
                .map_err(|error| format!("{error}: write N, a..b, interleaved or current_step")),
        }
    }
}

impl Serialize for WindowPolicy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Self::Interleaved => serializer.serialize_str("interleaved"),
            Self::CurrentStep => serializer.serialize_str("current_step"),
            Self::Last(n) => serializer.serialize_u32(n),
            Self::Random { min, max } => {
                let mut seq = serializer.serialize_seq(Some(2))?;
                seq.serialize_element(&min)?;
                seq.serialize_element(&max)?;
                seq.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for WindowPolicy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(WindowVisitor)
    }
}

struct WindowVisitor;

impl<'de> Visitor<'de> for WindowVisitor {
    type Value = WindowPolicy;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            r#""interleaved", "current_step", a number of turns N, or a range [a, b] to draw N from"#,
        )
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<WindowPolicy, E> {
        match value {
            "interleaved" => Ok(WindowPolicy::Interleaved),
            "current_step" => Ok(WindowPolicy::CurrentStep),
            _ => Err(E::invalid_value(de::Unexpected::Str(value), &self)),
        }
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<WindowPolicy, E> {
        turns(value).map(WindowPolicy::Last)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<WindowPolicy, E> {
        let value = u64::try_from(value)
            .map_err(|_| E::invalid_value(de::Unexpected::Signed(value), &self))?;
        self.visit_u64(value)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WindowPolicy, A::Error> {
        let length = |found| de::Error::invalid_length(found, &"a range [a, b] of two numbers");
        let min: u64 = seq.next_element()?.ok_or_else(|| length(0))?;
        let max: u64 = seq.next_element()?.ok_or_else(|| length(1))?;
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(length(3));
        }
        let (min, max) = (turns(min)?, turns(max)?);
        if min > max {
            return Err(de::Error::custom(format!(
                "the window range [{min}, {max}] is empty: write [a, b] with a <= b"
            )));
        }
        Ok(WindowPolicy::Random { min, max })
    }
}

/// A number of turns, which must fit in 32 bits.
fn turns<E: de::Error>(value: u64) -> Result<u32, E> {
    u32::try_from(value).map_err(|_| E::custom(format!("a window of {value} turns is too large")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn reads_each_form_and_rejects_the_rest() {
        assert_eq!(WindowPolicy::from_str("3"), Ok(WindowPolicy::Last(3)));
        assert_eq!(
            WindowPolicy::from_str("1..4"),
            Ok(WindowPolicy::Random { min: 1, max: 4 })
        );
        assert_eq!(
            WindowPolicy::from_str("1..=4"),
            Ok(WindowPolicy::Random { min: 1, max: 4 })
        );
        assert_eq!(
            WindowPolicy::from_str("interleaved"),
            Ok(WindowPolicy::Interleaved)
        );
        assert_eq!(
            WindowPolicy::from_str("current_step"),
            Ok(WindowPolicy::CurrentStep)
        );
        for (bad, expected) in [
            ("4..1", "is empty"),
            ("x", "write N, a..b"),
            ("1..", "is not a number"),
            ("-1", "is not a number"),
        ] {
            let error = WindowPolicy::from_str(bad).unwrap_err();
            assert!(error.contains(expected), "{bad}: {error}");
        }
    }

    #[derive(Debug, Deserialize, Serialize)]
    struct Holder {
        window: WindowPolicy,
    }

    fn read(value: &str) -> Result<WindowPolicy, String> {
        toml::from_str::<Holder>(&format!("window = {value}"))
            .map(|holder| holder.window)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn reads_and_writes_each_form() {
        let cases = [
            ("\"interleaved\"", WindowPolicy::Interleaved),
            ("\"current_step\"", WindowPolicy::CurrentStep),
            ("1", WindowPolicy::Last(1)),
            ("[1, 4]", WindowPolicy::Random { min: 1, max: 4 }),
        ];
        for (text, policy) in cases {
            assert_eq!(read(text), Ok(policy), "{text}");
            let written = toml::to_string(&Holder { window: policy }).unwrap();
            assert_eq!(written.trim(), format!("window = {text}"));
            let json = serde_json::to_string(&policy).unwrap();
            assert_eq!(serde_json::from_str::<WindowPolicy>(&json).unwrap(), policy);
        }
    }

    #[test]
    fn rejects_what_is_not_a_window() {
        for (text, expected) in [
            ("\"all\"", "\"interleaved\", \"current_step\""),
            ("-1", "a number of turns"),
            ("[4, 1]", "[4, 1] is empty"),
            ("[1]", "two numbers"),
            ("[1, 2, 3]", "two numbers"),
            ("1.5", "a range [a, b]"),
            ("8589934592", "too large"),
        ] {
            let error = read(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn resolves_to_a_window() {
        assert_eq!(WindowPolicy::Interleaved.resolve(0, "t"), Window::All);
        assert_eq!(WindowPolicy::CurrentStep.resolve(0, "t"), Window::Last(0));
        assert_eq!(WindowPolicy::Last(3).resolve(0, "t"), Window::Last(3));
        let random = WindowPolicy::Random { min: 1, max: 4 };
        assert_eq!(random.resolve(7, "a__0"), random.resolve(7, "a__0"));
        assert_eq!(
            WindowPolicy::Random { min: 2, max: 2 }.resolve(7, "a"),
            Window::Last(2)
        );
    }

    #[test]
    fn draws_are_uniform_stable_and_seeded() {
        let mut counts = [0usize; 4];
        for sample in 0..4000 {
            let n = draw(0, &format!("task__{sample}"), 1, 4);
            counts[(n - 1) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&count| (850..1150).contains(&count)),
            "{counts:?}"
        );
        // Pinned: a change here changes the window of every recorded random-window run.
        let pinned: Vec<u32> = (0..8)
            .map(|k| draw(0, &format!("swerve-examples__calc-1__{k}"), 1, 4))
            .collect();
        assert_eq!(pinned, PINNED);
        let reseeded: Vec<u32> = (0..8)
            .map(|k| draw(1, &format!("swerve-examples__calc-1__{k}"), 1, 4))
            .collect();
        assert_ne!(pinned, reseeded);
        assert_eq!(draw(5, "x", 0, u32::MAX), draw(5, "x", 0, u32::MAX));
    }

    const PINNED: [u32; 8] = [1, 1, 2, 3, 4, 4, 1, 4];
}
