//! Tests that need what the sandbox forbids: finding, in a test log, that the tests tried
//! the network (evaluation sandboxes have none) or a download of external test data, so a
//! failure for that reason is named in the report ([`NeedsNetwork`]) instead of passing for a
//! wrong patch or a broken environment.
//!
//! The evidence is the log's own lines: the messages Python's `socket`, `urllib`, `requests`,
//! `urllib3`, `http.client` and pip print when a name cannot be resolved or a connection
//! cannot be made without a network, Node's (`getaddrinfo EAI_AGAIN host`, `ENOTFOUND`: npm,
//! mocha's and jest's HTTP tests), and the messages of test-data downloaders (pydicom's
//! `get_testdata_file`, `pooch`, `datasets`). Lines are matched case-sensitively against
//! fixed texts, so a test named `test_network` does not count; a log with no such line has
//! no evidence.

use serde::{Deserialize, Serialize};

/// Texts printed when a process inside a sandbox without a network reaches for it.
const NETWORK_MARKERS: &[&str] = &[
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "nodename nor servname provided",
    "Network is unreachable",
    "[Errno 101]",
    "[Errno -3]",
    "[Errno -2]",
    "socket.gaierror",
    "NewConnectionError",
    "Max retries exceeded with url",
    "urlopen error",
    "Failed to establish a new connection",
    "ConnectionRefusedError: [Errno 111]",
    "Could not resolve host",
    "getaddrinfo EAI_AGAIN",
    "getaddrinfo ENOTFOUND",
    "RemoteDisconnected",
    "A download failure occurred while attempting to retrieve",
];

/// Texts printed when external test data could not be downloaded.
const DOWNLOAD_MARKERS: &[&str] = &[
    "A download failure occurred while attempting to retrieve",
    "pydicom.data.download",
    "data_manager.py",
    "download_with_progress",
    "get_testdata_file",
    "pooch",
    "HTTPError",
];

/// At most this many evidence lines are kept.
const MAX_EVIDENCE: usize = 5;

/// Why a test run could not be judged offline: the log lines showing the tests tried the
/// network or an external download.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeedsNetwork {
    /// `network` (a name lookup or connection failed) or `download` (external test data
    /// could not be fetched).
    pub reason: String,
    /// Up to five lines of the log, trimmed, that show it.
    pub evidence: Vec<String>,
}

impl std::fmt::Display for NeedsNetwork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.reason.as_str() {
            "download" => "the tests download external test data",
            _ => "the tests use the network",
        };
        write!(f, "{what}, which evaluation sandboxes do not have")?;
        if let Some(first) = self.evidence.first() {
            write!(f, " (log: \"{first}\")")?;
        }
        Ok(())
    }
}

/// The network evidence in `log`, if any.
pub fn network_evidence(log: &str) -> Option<NeedsNetwork> {
    let network: Vec<&str> = log
        .lines()
        .filter(|line| NETWORK_MARKERS.iter().any(|marker| line.contains(marker)))
        .collect();
    if network.is_empty() {
        return None;
    }
    let download = log
        .lines()
        .any(|line| DOWNLOAD_MARKERS.iter().any(|marker| line.contains(marker)));
    let mut evidence: Vec<String> = Vec::new();
    for line in network {
        let line = line.trim();
        let line: String = line.chars().take(300).collect();
        if !evidence.contains(&line) {
            evidence.push(line);
        }
        if evidence.len() == MAX_EVIDENCE {
            break;
        }
    }
    Some(NeedsNetwork {
        reason: if download { "download" } else { "network" }.into(),
        evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_name_resolution_failures() {
        let log = "test_a PASSED\nE   urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\nE   urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n";
        let found = network_evidence(log).unwrap();
        assert_eq!(found.reason, "network");
        assert_eq!(found.evidence.len(), 1, "repeated lines are kept once");
        assert!(found.to_string().contains("use the network"));
    }

    #[test]
    fn finds_nodes_name_resolution_failures() {
        // axios__axios-5085's gold run (SWE-bench Multilingual): mocha's TAP output for a
        // test that requests postman-echo.com.
        let log = "not ok 1 issues 4999 should not fail with query parsing\n  getaddrinfo EAI_AGAIN postman-echo.com\n  Error: getaddrinfo EAI_AGAIN postman-echo.com\n      at AxiosError.from (file:///testbed/lib/core/AxiosError.js:89:14)\nok 2 issues 5028 should handle set-cookie headers as an array\n";
        let found = network_evidence(log).unwrap();
        assert_eq!(found.reason, "network");
        assert_eq!(
            found.evidence,
            [
                "getaddrinfo EAI_AGAIN postman-echo.com",
                "Error: getaddrinfo EAI_AGAIN postman-echo.com"
            ]
        );
        assert!(network_evidence("npm ERR! getaddrinfo ENOTFOUND registry.npmjs.org\n").is_some());
    }

    #[test]
    fn names_downloads_of_test_data() {
        let log = "pydicom/data/data_manager.py:123: in get_testdata_file\nE   urllib.error.URLError: <urlopen error [Errno 101] Network is unreachable>\n";
        let found = network_evidence(log).unwrap();
        assert_eq!(found.reason, "download");
    }

    #[test]
    fn a_test_named_after_the_network_is_no_evidence() {
        assert_eq!(
            network_evidence("tests/test_net.py::test_network_unreachable PASSED\n"),
            None
        );
    }
}
