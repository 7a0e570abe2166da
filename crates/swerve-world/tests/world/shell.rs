//! The shell reader: words after quote removal, what counts as a command, here-document
//! bodies, directories changed by `cd`, and errors for malformed lines.

use swerve_world::invocation::{PythonRun, Unit, python_run, units};
use swerve_world::shell::{RedirectOp, Script, ShellError, Word};

/// The words of every simple command.
fn commands(text: &str) -> Vec<Vec<String>> {
    Script::parse(text)
        .unwrap_or_else(|err| panic!("{text:?}: {err}"))
        .commands
        .iter()
        .map(|command| command.words.iter().map(|w| w.text.clone()).collect())
        .collect()
}

fn words(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

#[test]
fn removes_quotes_and_escapes() {
    assert_eq!(
        commands(r#"grep -r "rm -rf" 'a b'  c\ d "x\"y" 'it'\''s' $'tab\there'"#),
        [words(&[
            "grep",
            "-r",
            "rm -rf",
            "a b",
            "c d",
            "x\"y",
            "it's",
            "tab\there"
        ])]
    );
    assert_eq!(commands("echo a\\\nb"), [words(&["echo", "ab"])]);
    assert_eq!(commands("echo \"a\\nb\""), [words(&["echo", "a\\nb"])]);
    assert_eq!(commands("echo a#b # comment"), [words(&["echo", "a#b"])]);
}

#[test]
fn splits_lists_pipelines_and_subshells() {
    assert_eq!(
        commands("a 1 && b || c; d | e |& f & g\nh"),
        [
            words(&["a", "1"]),
            words(&["b"]),
            words(&["c"]),
            words(&["d"]),
            words(&["e"]),
            words(&["f"]),
            words(&["g"]),
            words(&["h"]),
        ]
    );
    assert_eq!(
        commands("(cd x && ls) ; { pwd; }"),
        [words(&["cd", "x"]), words(&["ls"]), words(&["pwd"])]
    );
    assert_eq!(
        commands("echo $((1+(2*3)))"),
        [words(&["echo", "$((1+(2*3)))"])]
    );
    assert_eq!(commands("((i++)); ls"), [words(&["ls"])]);
}

#[test]
fn substitutions_run_before_their_command() {
    assert_eq!(
        commands("echo $(date +%s) `whoami` \"$(id -u)\" <(ls) ${X:-$(pwd)}"),
        [
            words(&["date", "+%s"]),
            words(&["whoami"]),
            words(&["id", "-u"]),
            words(&["ls"]),
            words(&["pwd"]),
            words(&[
                "echo",
                "$(date +%s)",
                "`whoami`",
                "$(id -u)",
                "<(ls)",
                "${X:-$(pwd)}"
            ]),
        ]
    );
    let script = Script::parse("echo \"$HOME\" ~/x '$HOME' *.py").unwrap();
    let flags: Vec<(bool, bool)> = script.commands[0]
        .words
        .iter()
        .map(|w| (w.expanded, w.glob))
        .collect();
    assert_eq!(
        flags,
        [
            (false, false),
            (true, false),
            (true, false),
            (false, false),
            (false, true)
        ]
    );
}

#[test]
fn keeps_assignments_and_redirections_apart() {
    let script = Script::parse("A=1 B=\"x y\" python t.py 2>&1 > out.log < in.txt").unwrap();
    let command = &script.commands[0];
    let assignments: Vec<&str> = command
        .assignments
        .iter()
        .map(|w| w.text.as_str())
        .collect();
    assert_eq!(assignments, ["A=1", "B=x y"]);
    let argv: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
    assert_eq!(argv, ["python", "t.py"]);
    let redirects: Vec<(Option<u32>, RedirectOp, &str)> = command
        .redirects
        .iter()
        .map(|r| (r.fd, r.op, r.target.text.as_str()))
        .collect();
    assert_eq!(
        redirects,
        [
            (Some(2), RedirectOp::DupWrite, "1"),
            (None, RedirectOp::Write, "out.log"),
            (None, RedirectOp::Read, "in.txt"),
        ]
    );
    // `"A"=1` is a word, not an assignment; so is `x=1` after the program name.
    let script = Script::parse("\"A\"=1 env x=1").unwrap();
    assert!(script.commands[0].assignments.is_empty());
    assert_eq!(script.commands[0].words.len(), 3);
}

#[test]
fn reads_here_documents() {
    let script = Script::parse(
        "cat > a.py <<'EOF' && python a.py\nprint('$(not run)')\nEOF\ncat <<-END\n\tx $(whoami)\n\tEND\nls",
    )
    .unwrap();
    let argv: Vec<Vec<String>> = script
        .commands
        .iter()
        .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
        .collect();
    assert_eq!(
        argv,
        [
            words(&["cat"]),
            words(&["python", "a.py"]),
            words(&["cat"]),
            words(&["whoami"]),
            words(&["ls"]),
        ]
    );
    assert_eq!(
        script.commands[0].stdin_text(),
        Some("print('$(not run)')\n")
    );
    assert_eq!(script.commands[2].stdin_text(), Some("x $(whoami)\n"));
    let script = Script::parse("python <<< 'print(1)'").unwrap();
    assert_eq!(script.commands[0].stdin_text(), Some("print(1)\n"));
    // A here-document without its delimiter line runs to the end, as bash allows.
    let script = Script::parse("cat <<EOF\nabc").unwrap();
    assert_eq!(script.commands[0].stdin_text(), Some("abc\n"));
}

#[test]
fn understands_compound_commands() {
    assert_eq!(
        commands("for f in $(ls); do python \"$f\"; done"),
        [words(&["ls"]), words(&["python", "$f"])]
    );
    assert_eq!(
        commands("if [ -f a ]; then cat a; elif true; then :; else echo no; fi"),
        [
            words(&["[", "-f", "a", "]"]),
            words(&["cat", "a"]),
            words(&["true"]),
            words(&[":"]),
            words(&["echo", "no"]),
        ]
    );
    assert_eq!(
        commands("case \"$1\" in\n  a|b) ls ;;\n  (*) pytest -q ;;\nesac; pwd"),
        [words(&["ls"]), words(&["pytest", "-q"]), words(&["pwd"])]
    );
    assert_eq!(
        commands("[[ $a == b && -n \"$(whoami)\" ]] || echo x"),
        [words(&["whoami"]), words(&["[["]), words(&["echo", "x"])]
    );
    let script = Script::parse("f() { ls; }; function g { pwd; }; f; g").unwrap();
    assert_eq!(script.functions, ["f", "g"]);
}

#[test]
fn follows_cd_for_later_commands() {
    let script = Script::parse("cd src && (cd pkg; ls) && pwd; cd /tmp; cd ..; ls").unwrap();
    let cwds: Vec<(String, Option<String>)> = script
        .commands
        .iter()
        .map(|c| (c.words[0].text.clone(), c.cwd.clone()))
        .collect();
    let expected = [
        ("cd", None),
        ("cd", Some("src")),
        ("ls", Some("src/pkg")),
        ("pwd", Some("src")),
        ("cd", Some("src")),
        ("cd", Some("/tmp")),
        ("ls", Some("/tmp/..")),
    ];
    let expected: Vec<(String, Option<String>)> = expected
        .iter()
        .map(|(w, c)| ((*w).to_owned(), c.map(str::to_owned)))
        .collect();
    assert_eq!(cwds, expected);
}

#[test]
fn reports_malformed_lines() {
    let cases: [(&str, ShellError); 9] = [
        (
            "echo 'a",
            ShellError::UnclosedQuote {
                quote: "'",
                offset: 5,
            },
        ),
        (
            "echo \"a",
            ShellError::UnclosedQuote {
                quote: "\"",
                offset: 5,
            },
        ),
        (
            "echo `a",
            ShellError::UnclosedQuote {
                quote: "`",
                offset: 5,
            },
        ),
        (
            "echo $'a",
            ShellError::UnclosedQuote {
                quote: "$'",
                offset: 5,
            },
        ),
        (
            "echo $(ls",
            ShellError::Unclosed {
                open: "$(",
                offset: 5,
            },
        ),
        (
            "(ls",
            ShellError::Unclosed {
                open: "(",
                offset: 0,
            },
        ),
        (
            "echo ${x",
            ShellError::Unclosed {
                open: "${",
                offset: 5,
            },
        ),
        ("ls )", ShellError::StrayParen { offset: 3 }),
        ("ls >", ShellError::MissingTarget { offset: 3 }),
    ];
    for (text, expected) in cases {
        assert_eq!(Script::parse(text), Err(expected), "{text:?}");
    }
    let deep = format!("{}ls{}", "$(".repeat(40), ")".repeat(40));
    assert_eq!(Script::parse(&deep), Err(ShellError::TooDeep));
    let deep = format!("{}ls{}", "( ".repeat(40), " )".repeat(40));
    assert_eq!(Script::parse(&deep), Err(ShellError::TooDeep));
    // `((…))` opens arithmetic, not two subshells.
    assert_eq!(Script::parse("((ls))").map(|s| s.commands.len()), Ok(0));
    assert_eq!(
        ShellError::UnclosedQuote {
            quote: "'",
            offset: 5
        }
        .to_string(),
        "unclosed ' quote starting at character 5"
    );
}

#[test]
fn unwraps_wrappers_and_nested_command_strings() {
    let names = |text: &str| -> Vec<String> {
        units(&Script::parse(text).unwrap())
            .into_iter()
            .map(|unit| match unit {
                Unit::Run(invocation) => invocation.program.text,
                Unit::Computed(invocation) => format!("?{}", invocation.program.text),
                Unit::Unreadable { error, .. } => format!("!{error}"),
            })
            .collect()
    };
    assert_eq!(
        names("timeout -k 5 60 nice -n 5 python x.py"),
        ["timeout", "nice", "python"]
    );
    assert_eq!(names("env -i A=1 B=2 pytest"), ["env", "pytest"]);
    assert_eq!(names("bash -c 'ls && sh -c \"pwd\"'"), ["ls", "pwd"]);
    assert_eq!(names("xargs -I{} -n 1 rm {}"), ["xargs", "rm"]);
    assert_eq!(names("find . -execdir python {} +"), ["find", "python"]);
    assert_eq!(names("uv run --with x python t.py"), ["uv", "python"]);
    assert_eq!(names("uv pip install x"), ["uv"]);
    assert_eq!(names("$CMD arg"), ["?$CMD"]);
    assert_eq!(
        names("bash -c 'echo \"'"),
        ["!unclosed \" quote starting at character 5"]
    );
    assert_eq!(names("f() { ls; }; f"), ["ls"]);
    assert_eq!(names("bash -c 'sh -c \"bash -c ls\"'"), ["ls"]);
    let nested = format!("{}ls", "eval ".repeat(40));
    let found = names(&nested);
    assert!(
        found
            .iter()
            .all(|name| name == "eval" || name.starts_with('!')),
        "{found:?}"
    );
    assert!(
        found
            .last()
            .is_some_and(|name| name.contains("levels deep")),
        "{found:?}"
    );
}

#[test]
fn reads_python_command_lines() {
    let args =
        |text: &str| -> Vec<Word> { Script::parse(text).unwrap().commands[0].words[1..].to_vec() };
    let run = args("python -u -W ignore -m pytest -q");
    assert!(matches!(python_run(&run), PythonRun::Module("pytest", rest) if rest.len() == 1));
    let run = args("python -Bc 'print(1)'");
    assert_eq!(python_run(&run), PythonRun::Code("print(1)"));
    let run = args("python -mjson.tool x.json");
    assert!(matches!(
        python_run(&run),
        PythonRun::Module("json.tool", _)
    ));
    let run = args("python -X dev t.py a");
    assert!(
        matches!(python_run(&run), PythonRun::Script(w, rest) if w.text == "t.py" && rest.len() == 1)
    );
    let run = args("python -");
    assert_eq!(python_run(&run), PythonRun::Stdin);
    let run = args("python -c");
    assert_eq!(python_run(&run), PythonRun::Code(""));
}
