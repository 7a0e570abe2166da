//! The built-in command table: which programs read or navigate (sandbox), run project code
//! (simulated), install packages (install) or are destructive, system-level or interactive
//! (blocked). The blocked list is SWE-World's `FOBIDEN_CMD` plus interactive programs.

use super::Route;

/// One group of the built-in table: the route, why, and the command keys.
pub(super) struct Group {
    pub(super) route: Route,
    pub(super) why: &'static str,
    pub(super) keys: &'static [&'static str],
}

#[rustfmt::skip]
pub(super) const BUILTIN: [Group; 4] = [
    Group {
        route: Route::Sandbox,
        why: "reads, searches or edits files, or only navigates",
        keys: &[
            // files and text
            "ls", "ll", "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg",
            "ag", "ack", "find", "fd", "tree", "wc", "sort", "uniq", "cut", "tr", "awk", "gawk",
            "mawk", "sed", "diff", "cmp", "comm", "file", "stat", "du", "df", "nl", "column",
            "paste", "join", "tac", "rev", "fold", "fmt", "od", "hexdump", "xxd", "strings",
            "md5sum", "sha1sum", "sha256sum", "base64", "iconv", "split", "jq", "yq", "touch",
            "mkdir", "tee", "patch", "chmod", "tar", "zip", "unzip", "gzip", "gunzip", "zcat",
            "realpath", "readlink", "basename", "dirname", "locate", "git",
            // shell builtins and plumbing
            "cd", "pushd", "popd", "pwd", "echo", "printf", "true", "false", "test", "[", "[[",
            "export", "unset", "set", "shopt", "declare", "typeset", "local", "readonly",
            "alias", "unalias", "type", "which", "whereis", "hash", "read", "shift", "return",
            "exit", "wait", "trap", "umask", "sleep", "seq", "expr", "date", "env", "printenv",
            "whoami", "id", "uname", "hostname", "ps", "nproc", "free", "uptime", "clear",
            "history", ":", "break", "continue",
            // wrappers (their inner command is routed too)
            "timeout", "nice", "nohup", "time", "command", "exec", "stdbuf", "setsid", "ionice",
            "xargs", "uv run", "poetry run", "pipenv run", "conda run", "pdm run",
        ],
    },
    Group {
        route: Route::Simulated,
        why: "runs project code or needs the project's environment",
        keys: &[
            "python", "pypy", "ipython", "jupyter", "pytest", "py.test", "tox", "nox",
            "nosetests", "nose2", "trial", "coverage", "pip", "conda", "uv", "poetry", "pipenv",
            "pdm", "hatch", "mypy", "pyright", "pylint", "flake8", "ruff", "black", "isort",
            "sphinx-build", "django-admin", "bash", "sh", "dash", "zsh", "ksh", "ash", "source",
            ".", "make", "cmake", "ninja", "meson", "gcc", "cc", "g++", "c++", "clang",
            "clang++", "cargo", "rustc", "go", "node", "npm", "npx", "yarn", "pnpm", "deno",
            "bun", "tsc", "ts-node", "java", "javac", "mvn", "gradle", "ruby", "rake", "bundle",
            "perl", "php", "Rscript", "julia", "strace",
        ],
    },
    Group {
        route: Route::Install,
        why: "installs packages",
        keys: &[
            "pip install", "conda install", "mamba install", "micromamba install",
            "uv pip install", "uv add", "uv sync", "poetry install", "poetry add",
            "pipenv install", "pdm add", "pdm install", "easy_install", "npm install", "npm i",
            "npm ci", "yarn add", "yarn install", "pnpm install", "pnpm add",
        ],
    },
    Group {
        route: Route::Blocked,
        why: "is destructive, system-level or interactive",
        keys: &[
            // SWE-World's FOBIDEN_CMD
            "pkill", "pgrep", "kill", "killall", "rm", "rmdir", "chattr", "mv", "cp", "ln",
            "dd", "mkfs", "wipefs", "parted", "fdisk", "sgdisk", "blkdiscard", "shred", "mount",
            "umount", "losetup", "ip", "ifconfig", "route", "iptables", "nft", "ufw", "sysctl",
            "ulimit", "reboot", "shutdown", "poweroff", "systemctl", "service", "cron",
            "crontab", "docker", "podman", "nerdctl", "kubectl", "helm", "ray", "apt",
            "apt-get", "yum", "dnf",
            // privilege changes and interactive programs
            "sudo", "su", "chown", "top", "htop", "watch", "vi", "vim", "nvim", "nano", "emacs",
        ],
    },
];
