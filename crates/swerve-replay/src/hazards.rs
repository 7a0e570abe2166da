//! Actions no environment can replay faithfully: they reach the network, read the wall
//! clock, draw random numbers or print in an order thread scheduling decides, so a different answer from the recorded one says nothing
//! about the environment. Found by the programs and calls the action's text names; a
//! divergence at such a step is reported under its hazard, not as an environment failure.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Why an action cannot be replayed faithfully.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hazard {
    /// Reaches the network (downloads, package installs, `git fetch`, HTTP clients).
    Network,
    /// Reads the wall clock (`date`, `time`, `datetime.now()`, timing a run).
    WallClock,
    /// Draws random numbers (`$RANDOM`, `random`, `uuid`, `mktemp`).
    Randomness,
    /// Prints in an order thread scheduling decides (`cargo test`'s parallel tests,
    /// `pytest -n`, background jobs).
    Scheduling,
}

impl Hazard {
    /// The hazard's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Network => "network",
            Self::WallClock => "wall-clock",
            Self::Randomness => "randomness",
            Self::Scheduling => "scheduling",
        }
    }
}

static PATTERNS: LazyLock<Vec<(Hazard, Regex)>> = LazyLock::new(|| {
    [
        (
            Hazard::Network,
            r"\b(curl|wget|ping|ssh|scp|nc|telnet)\b|\b(pip3?|uv|conda|apt(-get)?|npm|yarn|cargo)\s+(install|add|download|update|upgrade)\b|\bgit\s+(clone|fetch|pull|push|ls-remote)\b|https?://|\b(requests|httpx|urllib\d?|urllib\.request|http\.client|socket|aiohttp)\.(get|post|put|request|urlopen|create_connection|socket|ClientSession)\b",
        ),
        (
            Hazard::WallClock,
            r"(^|[;&|(\s])(date|time|uptime)(\s|$|[;&|)])|\b(datetime\.(datetime\.)?(now|today|utcnow)|time\.(time|time_ns|perf_counter|monotonic|localtime|ctime|strftime)|timeit)\b|--durations\b",
        ),
        (
            Hazard::Randomness,
            r"\$RANDOM\b|\b(mktemp|shuf|uuidgen)\b|\b(random|uuid|secrets|numpy\.random|np\.random)\.\w+|/dev/u?random|\bimport (random|uuid|secrets)\b|-p\s+randomly|--random",
        ),
        (
            Hazard::Scheduling,
            r"\bcargo\s+(test|nextest)\b|\bpytest\b.*\s-n\s*(\d+|auto)\b|\bxdist\b|[^&]&\s*$|[^&]&\s+[^&]",
        ),
    ]
    .into_iter()
    .map(|(hazard, pattern)| (hazard, Regex::new(pattern).expect("a valid pattern")))
    .collect()
});

/// What a program prints when it reached for the network the sandbox does not give it.
static NETWORK_FAILURES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Temporary failure in name resolution|Name or service not known|Network is unreachable|nodename nor servname provided|Could not resolve host|Failed to establish a new connection")
        .expect("a valid pattern")
});

/// The hazards an action shows by what it answered: a program that tried the network (the
/// command line may not say so: `python3 reproduce.py`).
pub fn output_hazards(output: &str) -> Vec<Hazard> {
    if NETWORK_FAILURES.is_match(output) {
        vec![Hazard::Network]
    } else {
        Vec::new()
    }
}

/// The hazards the action `text` shows, each once, in [`Hazard`] order.
pub fn hazards(text: &str) -> Vec<Hazard> {
    PATTERNS
        .iter()
        .filter(|(_, pattern)| pattern.is_match(text))
        .map(|(hazard, _)| *hazard)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_hazards_of_real_actions() {
        assert_eq!(
            hazards("pip install -e . && curl https://x"),
            [Hazard::Network]
        );
        assert_eq!(
            hazards("python -c 'import time; print(time.time())'"),
            [Hazard::WallClock]
        );
        assert_eq!(hazards("time python run.py"), [Hazard::WallClock]);
        assert_eq!(
            hazards("python -c 'import random; print(random.random())'"),
            [Hazard::Randomness]
        );
        assert_eq!(
            hazards("echo $RANDOM; date"),
            [Hazard::WallClock, Hazard::Randomness]
        );
        assert!(hazards("grep -rn update_time src/ && cat setup.py").is_empty());
        assert!(hazards("sed -n 1,20p src/_pytest/logging.py").is_empty());
        assert_eq!(
            output_hazards(
                "Failed: <urlopen error [Errno -3] Temporary failure in name resolution>"
            ),
            [Hazard::Network]
        );
        assert!(output_hazards("3 passed").is_empty());
    }
}
