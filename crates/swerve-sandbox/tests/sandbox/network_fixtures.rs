//! The sandbox's side of hermetic network fixtures (issue 26): `sandbox.hosts` names a
//! server that runs inside the sandbox's own network namespace, and `sandbox.drop_outbound`
//! makes a connection to an address outside the sandbox time out, as on a network where
//! nothing answers, instead of failing at once. Real sandboxes, a real server on port 80.

use crate::common;

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use common::{Fixture, isolated};
use swerve_core::Shell;
use swerve_sandbox::{SandboxConfig, Workspace, WorkspaceOptions};

/// Starts a Python HTTP server on `127.0.0.1:80` inside the sandbox, fetches
/// `http://httpbin.org/served.txt` with the server's answer and prints it, or the error.
const SERVE_AND_FETCH: &str = r#"mkdir -p /tmp/www && echo served-locally > /tmp/www/served.txt
cd /tmp/www && python3 -m http.server --bind 127.0.0.1 80 >/tmp/server.log 2>&1 &
python3 - <<'EOF'
import time, urllib.request
for attempt in range(100):
    try:
        print(urllib.request.urlopen("http://httpbin.org/served.txt", timeout=2).read().decode().strip())
        break
    except Exception as error:
        last = error
        time.sleep(0.1)
else:
    print(f"failed: {last}")
EOF"#;

/// Connects to requests' TARPIT address with a 1 s timeout; prints the outcome's kind.
const CONNECT_TARPIT: &str = r#"python3 - <<'EOF'
import socket, time
started = time.monotonic()
try:
    socket.create_connection(("10.255.255.1", 80), timeout=1.0)
    print("connected")
except socket.timeout:
    print(f"timed out after {time.monotonic() - started:.1f}")
except OSError as error:
    print(f"refused: {error.strerror}")
EOF"#;

fn run(config: SandboxConfig, command: &str) -> String {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(config);
    let outcome = workspace
        .sandbox()
        .run(command, Duration::from_secs(60))
        .unwrap();
    assert!(outcome.success(), "{}", outcome.stderr_text());
    outcome.stdout_text()
}

fn with_httpbin_name() -> SandboxConfig {
    SandboxConfig {
        hosts: BTreeMap::from([("httpbin.org".to_owned(), IpAddr::from([127, 0, 0, 1]))]),
        ..isolated()
    }
}

#[test]
fn a_hosts_entry_names_a_server_inside_the_sandbox() {
    assert_eq!(
        run(with_httpbin_name(), SERVE_AND_FETCH).trim(),
        "served-locally"
    );
    // The host's entries stay, the added one is last, and the file is read-only.
    let hosts = run(
        with_httpbin_name(),
        "cat /etc/hosts; echo x >> /etc/hosts 2>/dev/null && echo writable || echo read-only",
    );
    assert!(hosts.contains("localhost"), "{hosts}");
    assert!(
        hosts.ends_with("127.0.0.1\thttpbin.org\nread-only\n"),
        "{hosts}"
    );
    // Without the entry the name does not resolve: the server is unreachable by that name.
    let without = run(isolated(), SERVE_AND_FETCH);
    assert!(without.starts_with("failed:"), "{without}");
}

#[test]
fn dropped_outbound_packets_make_connections_time_out() {
    let dropped = run(
        SandboxConfig {
            drop_outbound: true,
            ..isolated()
        },
        CONNECT_TARPIT,
    );
    assert!(dropped.starts_with("timed out after 1."), "{dropped}");
    // By default an address outside the sandbox is refused at once.
    let refused = run(isolated(), CONNECT_TARPIT);
    assert_eq!(refused.trim(), "refused: Network is unreachable");
}

#[test]
fn a_bad_host_name_is_an_error_naming_it() {
    let fixture = Fixture::new();
    let config = SandboxConfig {
        hosts: BTreeMap::from([("not a name".to_owned(), IpAddr::from([127, 0, 0, 1]))]),
        ..isolated()
    };
    let options = WorkspaceOptions {
        sandbox: config,
        ..WorkspaceOptions::default()
    };
    let error = match Workspace::create(&fixture.cache, &fixture.base(), &options) {
        Ok(_) => panic!("a workspace was made with a bad host name"),
        Err(error) => error.to_string(),
    };
    assert!(
        error.contains("sandbox.hosts") && error.contains("\"not a name\""),
        "{error}"
    );
}
