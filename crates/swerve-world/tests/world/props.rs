//! Property tests: the shell reader, the router, target extraction, the patch reader and
//! the two model-reply parsers never panic on any input; quoted words and joined command
//! lines read back as written; a line routes as its strongest command; rendered replies
//! parse back to themselves; budgets are never exceeded.

use proptest::prelude::*;
use serde_json::json;
use swerve_world::patch_files::patch_paths;
use swerve_world::shell::Script;
use swerve_world::targets::Targets;
use swerve_world::tokens::{ApproxTokens, TokenCounter, fit, share};
use swerve_world::{ReplyError, Route, Router, parse_swr_reply, parse_swt_reply};

/// Pieces of shell syntax, to reach deep into the reader.
fn shell_fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("'".to_owned()),
        Just("\"".to_owned()),
        Just("`".to_owned()),
        Just("\\".to_owned()),
        Just("$(".to_owned()),
        Just("$((".to_owned()),
        Just("${".to_owned()),
        Just("$'".to_owned()),
        Just("(".to_owned()),
        Just(")".to_owned()),
        Just("<(".to_owned()),
        Just("{ ".to_owned()),
        Just(" }".to_owned()),
        Just("&&".to_owned()),
        Just("||".to_owned()),
        Just(";".to_owned()),
        Just(";;".to_owned()),
        Just("|".to_owned()),
        Just("&".to_owned()),
        Just("\n".to_owned()),
        Just("<<EOF\n".to_owned()),
        Just("<<-'EOF'\n".to_owned()),
        Just("EOF\n".to_owned()),
        Just("<<<".to_owned()),
        Just("2>&1".to_owned()),
        Just("&>".to_owned()),
        Just(">".to_owned()),
        Just("#".to_owned()),
        Just(" ".to_owned()),
        Just("case x in ".to_owned()),
        Just("esac".to_owned()),
        Just("for i in ".to_owned()),
        Just("do ".to_owned()),
        Just("done".to_owned()),
        Just("[[ ".to_owned()),
        Just(" ]]".to_owned()),
        Just("f() ".to_owned()),
        Just("bash -c ".to_owned()),
        Just("eval ".to_owned()),
        Just("python -m ".to_owned()),
        Just("python -c ".to_owned()),
        Just("timeout 5 ".to_owned()),
        Just("xargs ".to_owned()),
        Just("find . -exec ".to_owned()),
        Just("pip install ".to_owned()),
        Just("rm ".to_owned()),
        Just("pytest ".to_owned()),
        Just("cd a && ".to_owned()),
        Just("é😀".to_owned()),
        "[ -~]{0,6}",
        "\\PC{0,3}",
    ]
}

fn shell_text() -> impl Strategy<Value = String> {
    prop::collection::vec(shell_fragment(), 0..24).prop_map(|parts| parts.concat())
}

/// A word quoted one of three ways so the shell reads it back unchanged.
fn quote(word: &str, style: u8) -> String {
    match style % 3 {
        0 => format!("'{}'", word.replace('\'', "'\\''")),
        1 => {
            let mut out = String::from("\"");
            for c in word.chars() {
                if matches!(c, '\\' | '"' | '$' | '`') {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
            out
        }
        _ => {
            if word.is_empty() {
                return "''".to_owned();
            }
            let mut out = String::new();
            for c in word.chars() {
                if c == '\n' {
                    out.push_str("'\n'");
                } else {
                    out.push('\\');
                    out.push(c);
                }
            }
            out
        }
    }
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_./-]{1,8}",
        "\\PC{0,8}",
        "[ '\"$`\\\\;&|()<>#*?\\[\\]{}=~\n\t!]{0,8}",
    ]
}

/// A simple command as words, each with its quoting style.
fn command() -> impl Strategy<Value = Vec<(String, u8)>> {
    prop::collection::vec((word(), any::<u8>()), 1..5)
}

/// A command line from the routing pool, and its route alone.
fn pooled() -> impl Strategy<Value = (&'static str, Route)> {
    prop::sample::select(vec![
        ("ls -la", Route::Sandbox),
        ("cat 'skip me'", Route::Sandbox),
        ("grep -r \"rm -rf\" .", Route::Sandbox),
        ("echo pytest", Route::Sandbox),
        ("python x.py", Route::Simulated),
        ("pytest -q", Route::Simulated),
        ("frobnicate", Route::Simulated),
        ("pip install x", Route::Install),
        ("uv pip install y", Route::Install),
        ("rm -rf build", Route::Blocked),
        ("kill 1", Route::Blocked),
        ("git diff", Route::Sandbox),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn nothing_panics_on_any_command_line(text in prop_oneof![shell_text(), "\\PC{0,64}", any::<String>()]) {
        let router = Router::default();
        let decision = router.route_command(&text);
        prop_assert!(!decision.reason.is_empty());
        let _ = Script::parse(&text);
        let targets = Targets::extract(&text, "/testbed");
        for target in targets.targets {
            prop_assert!(target.candidates.iter().all(|path| path.starts_with('/')));
        }
    }

    #[test]
    fn quoted_words_read_back_unchanged(words in command()) {
        let line: Vec<String> = words.iter().map(|(word, style)| quote(word, *style)).collect();
        let line = line.join(" ");
        let script = Script::parse(&line).map_err(|err| TestCaseError::fail(format!("{line:?}: {err}")))?;
        prop_assert_eq!(script.commands.len(), 1, "{:?}", line);
        let read: Vec<&str> = script.commands[0].words.iter().map(|w| w.text.as_str()).collect();
        let expected: Vec<&str> = words.iter().map(|(word, _)| word.as_str()).collect();
        prop_assert_eq!(read, expected, "{:?}", line);
        prop_assert!(script.commands[0].assignments.is_empty());
        prop_assert!(script.commands[0].words.iter().all(|w| w.is_literal()));
    }

    #[test]
    fn joined_commands_read_back_in_order(
        commands in prop::collection::vec(command(), 1..5),
        operators in prop::collection::vec(prop::sample::select(vec![" && ", " || ", "; ", " | ", "\n", " & "]), 4),
    ) {
        let mut line = String::new();
        for (index, words) in commands.iter().enumerate() {
            if index > 0 {
                line.push_str(operators[index - 1]);
            }
            let quoted: Vec<String> = words.iter().map(|(word, style)| quote(word, *style)).collect();
            line.push_str(&quoted.join(" "));
        }
        let script = Script::parse(&line).map_err(|err| TestCaseError::fail(format!("{line:?}: {err}")))?;
        let read: Vec<Vec<&str>> = script
            .commands
            .iter()
            .map(|c| c.words.iter().map(|w| w.text.as_str()).collect())
            .collect();
        let expected: Vec<Vec<&str>> = commands
            .iter()
            .map(|words| words.iter().map(|(word, _)| word.as_str()).collect())
            .collect();
        prop_assert_eq!(read, expected, "{:?}", line);
    }

    #[test]
    fn a_line_routes_as_its_strongest_command(
        parts in prop::collection::vec(pooled(), 1..5),
        operators in prop::collection::vec(prop::sample::select(vec![" && ", " || ", "; ", " | ", "\n"]), 4),
        wrap in 0u8..4,
    ) {
        let router = Router::default();
        let mut line = String::new();
        for (index, (command, _)) in parts.iter().enumerate() {
            if index > 0 {
                line.push_str(operators[index - 1]);
            }
            line.push_str(command);
        }
        let line = match wrap {
            0 => line,
            1 => format!("bash -c {}", quote(&line, 0)),
            2 => format!("echo \"$({line})\""),
            _ => format!("( {line} )"),
        };
        let strongest = parts.iter().map(|(_, route)| *route).max().unwrap();
        let decision = router.route_command(&line);
        prop_assert_eq!(decision.route, strongest, "{:?}: {}", line, decision.reason);
    }

    #[test]
    fn swt_parser_never_panics(text in prop_oneof![any::<String>(), json_like()]) {
        match parse_swt_reply(&text) {
            Ok(reply) => prop_assert!(reply.exit_code_given || reply.exit_code == 1),
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }

    #[test]
    fn swt_replies_parse_back(
        stdout in any::<String>(),
        stderr in any::<String>(),
        exit_code in any::<i32>(),
        reasoning in proptest::option::of("[^{}<>]{0,40}"),
        preamble in "[^{<]{0,20}",
        trailer in "[^<]{0,40}",
        fence in any::<bool>(),
    ) {
        let object = json!({"stdout": stdout, "stderr": stderr, "exit_code": exit_code}).to_string();
        let object = if fence { format!("```json\n{object}\n```") } else { object };
        let text = match &reasoning {
            Some(thought) => format!("<think>{thought}</think>{preamble}{object}{trailer}"),
            None => format!("{preamble}{object}{trailer}"),
        };
        let reply = parse_swt_reply(&text).map_err(|err| TestCaseError::fail(format!("{text:?}: {err}")))?;
        prop_assert_eq!(&reply.stdout, &stdout);
        prop_assert_eq!(&reply.stderr, &stderr);
        prop_assert_eq!(reply.exit_code, exit_code);
        prop_assert!(reply.exit_code_given);
        prop_assert_eq!(reply.reasoning.as_deref(), reasoning.as_deref().map(str::trim));
    }

    #[test]
    fn swt_replies_with_raw_newlines_are_repaired(
        stdout in "[^\"\\\\\\x00-\\x08\\x0b-\\x1f]{0,40}",
        exit_code in 0i32..256,
    ) {
        let text = format!("{{\"stdout\": \"{stdout}\", \"stderr\": \"\", \"exit_code\": {exit_code},}}");
        let reply = parse_swt_reply(&text).map_err(|err| TestCaseError::fail(format!("{text:?}: {err}")))?;
        prop_assert_eq!(reply.stdout, stdout);
        prop_assert_eq!(reply.exit_code, exit_code);
    }

    #[test]
    fn swr_parser_never_panics(text in prop_oneof![any::<String>(), json_like()]) {
        match parse_swr_reply(&text) {
            Ok(reply) => prop_assert!(reply.reward <= 1),
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }

    #[test]
    fn swr_replies_parse_back(
        report in any::<String>(),
        reward in 0u8..=1,
        reasoning in proptest::option::of("[^{}<>]{0,40}"),
        trailer in "[^<]{0,40}",
    ) {
        let object = json!({"test_report": report, "reward": reward}).to_string();
        let text = match &reasoning {
            Some(thought) => format!("<think>{thought}</think>\n{object}{trailer}"),
            None => format!("{object}{trailer}"),
        };
        let reply = parse_swr_reply(&text).map_err(|err| TestCaseError::fail(format!("{text:?}: {err}")))?;
        prop_assert_eq!(reply.reward, reward);
        prop_assert_eq!(&reply.test_report, &report);
        prop_assert_eq!(reply.reasoning.as_deref(), reasoning.as_deref().map(str::trim));
    }

    #[test]
    fn swr_rewards_other_than_zero_or_one_are_refused(reward in any::<i64>().prop_filter("not 0/1", |r| *r != 0 && *r != 1)) {
        let text = json!({"test_report": "", "reward": reward}).to_string();
        let refused = matches!(parse_swr_reply(&text), Err(ReplyError::Field { field: "reward", .. }));
        prop_assert!(refused, "{}", text);
    }

    #[test]
    fn patch_reader_never_panics_and_finds_generated_files(
        text in any::<String>(),
        paths in prop::collection::vec("[a-z]{1,5}(/[a-z_]{1,5}){0,2}\\.py", 1..5),
    ) {
        let _ = patch_paths(&text);
        let mut unique: Vec<String> = Vec::new();
        for path in paths {
            if !unique.contains(&path) {
                unique.push(path);
            }
        }
        let patch: String = unique
            .iter()
            .map(|path| format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,2 @@\n x\n--- y\n++++ z\n"))
            .collect();
        prop_assert_eq!(patch_paths(&patch), unique);
    }

    #[test]
    fn budgets_are_never_exceeded(text in any::<String>(), budget in 0usize..200) {
        let (fitted, cut) = fit(&text, budget, &ApproxTokens);
        prop_assert!(ApproxTokens.count(&fitted) <= budget);
        prop_assert_eq!(cut, fitted != text);
        if cut && let Some((kept, _)) = fitted.rsplit_once("\n[... cut to fit") {
            prop_assert!(text.starts_with(kept));
        }
    }

    #[test]
    fn shares_stay_within_budget_and_need(sizes in prop::collection::vec(0usize..1000, 0..10), budget in 0usize..3000) {
        let shares = share(&sizes, budget);
        prop_assert_eq!(shares.len(), sizes.len());
        prop_assert!(shares.iter().sum::<usize>() <= budget);
        prop_assert!(shares.iter().zip(&sizes).all(|(share, size)| share <= size));
        if sizes.iter().sum::<usize>() <= budget {
            prop_assert_eq!(shares, sizes);
        }
    }
}

/// Text close to what world models answer, to reach deep into the reply parsers.
fn json_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<think>".to_owned()),
        Just("</think>".to_owned()),
        Just("```json\n".to_owned()),
        Just("```".to_owned()),
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("\"stdout\": ".to_owned()),
        Just("\"exit_code\": ".to_owned()),
        Just("\"reward\": ".to_owned()),
        Just("\"test_report\": ".to_owned()),
        Just("\"".to_owned()),
        Just(",".to_owned()),
        Just("\\".to_owned()),
        Just("1e400".to_owned()),
        Just("-0.0".to_owned()),
        Just("99999999999999999999".to_owned()),
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just("\n".to_owned()),
        "[ -~]{0,6}",
    ];
    prop::collection::vec(piece, 0..30).prop_map(|parts| parts.concat())
}
