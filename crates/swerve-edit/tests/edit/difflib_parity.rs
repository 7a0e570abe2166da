//! The `difflib` port gives Python's answers: opcodes and unified diffs of 400 generated
//! pairs of texts (small alphabets, so lines repeat; up to 320 lines, so `autojunk` acts)
//! are compared with what the real `python3` computes for the same pairs.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use swerve_edit::diff::{Tag, opcodes, unified_diff};

const PYTHON: &str = r#"
import difflib, json, sys
out = []
for a, b in json.load(sys.stdin):
    la, lb = a.splitlines(), b.splitlines()
    codes = difflib.SequenceMatcher(None, la, lb).get_opcodes()
    diff = "".join(line + "\n" for line in difflib.unified_diff(la, lb, "a", "b", lineterm=""))
    out.append([codes, diff])
json.dump(out, sys.stdout)
"#;

/// A small deterministic generator (xorshift64*).
struct Random(u64);

impl Random {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % bound
    }

    fn text(&mut self, lines: u64, alphabet: u64) -> String {
        (0..lines)
            .map(|_| format!("line {}\n", self.below(alphabet)))
            .collect()
    }

    /// `text` with a few lines changed, removed or added.
    fn edited(&mut self, text: &str, alphabet: u64) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        for _ in 0..self.below(6) {
            let at = self.below(lines.len() as u64 + 1) as usize;
            match self.below(3) {
                0 if at < lines.len() => lines[at] = format!("new {}", self.below(alphabet)),
                1 if at < lines.len() => {
                    lines.remove(at);
                }
                _ => lines.insert(at, format!("line {}", self.below(alphabet))),
            }
        }
        lines.iter().map(|line| format!("{line}\n")).collect()
    }
}

#[test]
fn opcodes_and_unified_diffs_match_python() {
    let mut random = Random(0x5eed_1234_abcd_0001);
    let pairs: Vec<(String, String)> = (0..400)
        .map(|case| {
            let alphabet = [3, 10, 1000][case % 3];
            let length = random.below(if case % 4 == 0 { 320 } else { 40 });
            let a = random.text(length, alphabet);
            let b = match case % 5 {
                0 => {
                    let length = random.below(40);
                    random.text(length, alphabet)
                }
                _ => random.edited(&a, alphabet),
            };
            (a, b)
        })
        .collect();
    let mut python = Command::new("python3")
        .args(["-c", PYTHON])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed as the reference");
    let input = serde_json::to_vec(&pairs).unwrap();
    python.stdin.take().unwrap().write_all(&input).unwrap();
    let output = python.wait_with_output().unwrap();
    assert!(output.status.success());
    let expected: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    for ((a, b), expected) in pairs.iter().zip(expected) {
        let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
        let codes: Vec<Value> = opcodes(&la, &lb)
            .into_iter()
            .map(|code| {
                let tag = match code.tag {
                    Tag::Equal => "equal",
                    Tag::Replace => "replace",
                    Tag::Delete => "delete",
                    Tag::Insert => "insert",
                };
                json!([tag, code.a.start, code.a.end, code.b.start, code.b.end])
            })
            .collect();
        assert_eq!(Value::from(codes), expected[0], "opcodes of {a:?} → {b:?}");
        assert_eq!(
            unified_diff(a, b, "a", "b"),
            expected[1],
            "diff of {a:?} → {b:?}"
        );
    }
}
