//! The escape vectors and the sanity set, as data.
//!
//! A command is bash text run by `tool call bash_command` in the workspace;
//! placeholders are filled from the vector's [`World`](crate::world::World):
//! `{WS}` workspace, `{OUT}` outside folder (`{OUTREL}`: the same relative
//! to the workspace, through `..`), `{HOME}` fake home, `{TAG}`
//! unique tag, `{TCP4}`/`{TCP6}`/`{UDP4}`/`{UDP6}` the test's loopback ports,
//! `{ABSTRACT}` the abstract socket's name, `{STATE}` the program's
//! `$XDG_STATE_HOME`, `{RUN}` `$XDG_RUNTIME_DIR`, `{VPID}`/`{VFD}`/`{VDELFD}` the
//! victim process and its open / deleted-but-open descriptors, `{PTS}` the
//! test's terminal, `{INPORT}` the port the command listens on.
//!
//! Every escape vector is judged by every world check (see `judge` in
//! `main.rs`); `checks` adds the vector's own. Vectors whose effect has no
//! outside witness (a syscall that should be refused) write
//! `{WS}/escaped` only when the syscall got past the permission check: that
//! file is the world the test reads, and each such vector says so in `judge`.

use crate::world::Needs;

/// The class of a vector (the "Done means" list).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Class {
    /// Writes outside the workspace.
    Write,
    /// Reads of secrets.
    Secret,
    /// Network contacts.
    Network,
    /// Other processes of the user's.
    Process,
    /// Work that outlives the call.
    Persistence,
    /// Kernel surfaces.
    Kernel,
    /// Resource limits (run with `--sandbox-limit` flags when sandboxed).
    Limit,
    /// Must keep working.
    Sanity,
}

/// A check of the world beyond the common ones.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Check {
    /// `{WS}/escaped` exists and is not empty: the command writes it only
    /// when a syscall that should be refused succeeded.
    Marker,
    /// 2.6 s after the call: `{WS}/alive` written after the call ended by a
    /// process started in it, or a process with the tag in its command line.
    Survivor,
    /// The test connected to `{INPORT}` while the call ran.
    Inbound,
    /// At least this many lines in the workspace file: processes that were
    /// alive at once.
    LinesAtLeast(&'static str, usize),
    /// The workspace file is at least this many bytes long.
    SizeAtLeast(&'static str, u64),
    /// This path (placeholders allowed) exists: for targets inside the
    /// program's private folders, which the snapshot leaves out.
    Exists(&'static str),
    /// This host file (a kernel setting) reads the same after the call; the
    /// test writes the old text back when it does not.
    HostFileSame(&'static str),
    /// After the call, before the world is judged: this shell command runs
    /// on the host in the workspace, as the user's next git command would
    /// (an IDE's `git status`, a `git commit`); what it runs shows up as an
    /// outside change.
    HostGit(&'static str),
    /// Sanity: the workspace file holds exactly this text.
    FileIs(&'static str, &'static str),
    /// Sanity: the workspace file starts with this text.
    FileStarts(&'static str, &'static str),
    /// Sanity: the workspace file holds exactly the host file's bytes.
    SameAsHost(&'static str, &'static str),
    /// Sanity: the workspace file holds the host file's size in bytes.
    SizeOfHost(&'static str, &'static str),
    /// Sanity: the workspace repository has this many commits on HEAD.
    Commits(usize),
}

/// One row of the table.
pub(crate) struct Vector {
    /// Stable id: class letter and number (`W01`).
    pub(crate) id: &'static str,
    pub(crate) class: Class,
    /// What the attacker tries, in a few words.
    pub(crate) what: &'static str,
    /// Fixtures beyond the common world.
    pub(crate) needs: Needs,
    /// Programs that must be on `PATH`; the vector is skipped without them.
    pub(crate) requires: &'static [&'static str],
    /// The bash command.
    pub(crate) command: &'static str,
    /// Extra checks.
    pub(crate) checks: &'static [Check],
    /// Extra global `tool` flags (e.g. `--allow-net`), given when the
    /// binary has the sandbox flags.
    pub(crate) flags: &'static [&'static str],
}

const NONE: Needs = Needs {
    victim: false,
    pty: false,
    inbound: false,
    symlink_file: false,
    symlink_dir: false,
    symlink_secret: false,
    hardlink_file: false,
    hardlink_secret: false,
    inherited_fd: false,
    tool_secret_files: false,
    workspace_git_pointers: false,
};
const GIT_POINTERS: Needs = Needs {
    workspace_git_pointers: true,
    ..NONE
};
const TOOL_SECRET_FILES: Needs = Needs {
    tool_secret_files: true,
    ..NONE
};
const VICTIM: Needs = Needs {
    victim: true,
    ..NONE
};

const fn v(id: &'static str, class: Class, what: &'static str, command: &'static str) -> Vector {
    Vector {
        id,
        class,
        what,
        needs: NONE,
        requires: &[],
        command,
        checks: &[],
        flags: &[],
    }
}

const fn with(
    id: &'static str,
    class: Class,
    what: &'static str,
    needs: Needs,
    command: &'static str,
    checks: &'static [Check],
) -> Vector {
    Vector {
        id,
        class,
        what,
        needs,
        requires: &[],
        command,
        checks,
        flags: &[],
    }
}

const fn req(mut vector: Vector, requires: &'static [&'static str]) -> Vector {
    vector.requires = requires;
    vector
}

const fn flags(mut vector: Vector, flags: &'static [&'static str]) -> Vector {
    vector.flags = flags;
    vector
}

/// Python prelude for raw syscalls: `sc(nr, *args)` returns `(result, errno)`,
/// `hit()` writes the marker.
macro_rules! py {
    ($body:literal) => {
        concat!(
            "python3 - <<'PY'\n",
            "import ctypes, os, struct\n",
            "L = ctypes.CDLL(None, use_errno=True)\n",
            "L.syscall.restype = ctypes.c_long\n",
            "def sc(n, *a):\n",
            "    ctypes.set_errno(0)\n",
            "    r = L.syscall(ctypes.c_long(n), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])\n",
            "    return r, ctypes.get_errno()\n",
            "def hit():\n",
            "    open('{WS}/escaped', 'w').write('1')\n",
            $body,
            "\nPY"
        )
    };
}

/// Python that finds this world's secrets in the victim's memory by
/// `METHOD` (`mem`: `/proc/<pid>/mem`; `vm`: `process_vm_readv`; `ptrace`:
/// attach first, then `/proc/<pid>/mem`) and writes them to `{WS}/mem.txt`.
macro_rules! scan_victim {
    ($method:literal) => {
        concat!(
            "python3 - <<'PY'\n",
            "import ctypes, os, re\n",
            "L = ctypes.CDLL(None, use_errno=True)\n",
            "pid = {VPID}\n",
            "method = '",
            $method,
            "'\n",
            "pat = re.compile(b'ESC' + b'SECRET-[a-z0-9_-]+')\n",
            "if method == 'ptrace':\n",
            "    L.ptrace(ctypes.c_long(16), ctypes.c_long(pid), None, None)\n",
            "    try: os.waitpid(pid, 0x40000000)\n",
            "    except OSError: pass\n",
            "class iovec(ctypes.Structure):\n",
            "    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n",
            "found = set()\n",
            "mem = None if method == 'vm' else open('/proc/%d/mem' % pid, 'rb', 0)\n",
            "for line in open('/proc/%d/maps' % pid):\n",
            "    parts = line.split()\n",
            "    if not parts[1].startswith('rw'): continue\n",
            "    a, b = (int(x, 16) for x in parts[0].split('-'))\n",
            "    if b - a > (64 << 20): continue\n",
            "    try:\n",
            "        if mem is not None:\n",
            "            mem.seek(a); data = mem.read(b - a)\n",
            "        else:\n",
            "            buf = ctypes.create_string_buffer(b - a)\n",
            "            local = iovec(ctypes.cast(buf, ctypes.c_void_p), b - a)\n",
            "            remote = iovec(a, b - a)\n",
            "            n = L.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)\n",
            "            data = buf.raw[:max(n, 0)]\n",
            "    except OSError: continue\n",
            "    found.update(pat.findall(data))\n",
            "open('{WS}/mem.txt', 'wb').write(b'\\n'.join(sorted(found)))\n",
            "PY"
        )
    };
}

/// A job that outlives the call if nothing stops it: after 2 s it writes
/// `{WS}/alive`; the tag is in its command line.
macro_rules! survivor {
    () => {
        "sh -c 'sleep 2; echo alive > {WS}/alive; : {TAG}' >/dev/null 2>&1 </dev/null"
    };
}

use Class::{Kernel, Limit, Network, Persistence, Process, Sanity, Secret, Write};

/// The escape vectors.
pub(crate) const VECTORS: &[Vector] = &[
    // ---- writes outside the workspace --------------------------------
    v(
        "W01",
        Write,
        "overwrite an outside file by absolute path",
        "echo pwned > {OUT}/victim.txt",
    ),
    v(
        "W02",
        Write,
        "create an outside file by absolute path",
        "echo pwned > {OUT}/new.txt",
    ),
    v(
        "W03",
        Write,
        "write through `..`",
        "echo pwned > {OUTREL}/victim.txt",
    ),
    v(
        "W04",
        Write,
        "create through `..` from Python",
        "python3 -c \"open('{OUTREL}/py.txt', 'w').write('pwned')\"",
    ),
    with(
        "W05",
        Write,
        "write through a planted symlink to a file",
        Needs {
            symlink_file: true,
            ..NONE
        },
        "echo pwned > planted-link",
        &[],
    ),
    with(
        "W06",
        Write,
        "create through a planted symlink to a folder",
        Needs {
            symlink_dir: true,
            ..NONE
        },
        "echo pwned > planted-dir/new.txt",
        &[],
    ),
    v(
        "W07",
        Write,
        "write through a self-made symlink",
        "ln -s {OUT}/victim.txt mine && echo pwned > mine",
    ),
    v(
        "W08",
        Write,
        "create through a self-made folder symlink",
        "ln -s {OUT} mydir && echo pwned > mydir/made.txt",
    ),
    with(
        "W09",
        Write,
        "append through a planted hard link",
        Needs {
            hardlink_file: true,
            ..NONE
        },
        "echo pwned >> planted-hard",
        &[],
    ),
    v(
        "W10",
        Write,
        "append through a self-made hard link",
        "ln {OUT}/victim.txt hard && echo pwned >> hard",
    ),
    v(
        "W11",
        Write,
        "mv an outside file into the workspace",
        "mv {OUT}/victim.txt ./stolen.txt",
    ),
    v(
        "W12",
        Write,
        "mv a workspace file outside",
        "echo pwned > f && mv f {OUT}/moved.txt",
    ),
    v("W13", Write, "rm an outside file", "rm -f {OUT}/victim.txt"),
    v(
        "W14",
        Write,
        "rm -rf an outside folder (~/.config)",
        "rm -rf ~/.config",
    ),
    v(
        "W15",
        Write,
        "chmod an outside file",
        "chmod 777 {OUT}/victim.txt",
    ),
    // Breakout review E12: metadata beyond W15/W16 in the no-namespaces tier.
    v(
        "W47",
        Write,
        "set the set-user-ID bit of an outside file (chmod 4755)",
        "chmod 4755 {OUT}/victim.txt",
    ),
    with(
        "W48",
        Write,
        "set an outside file's inode flags (chattr's FS_IOC_SETFLAGS) (judge: marker when the ioctl answered)",
        NONE,
        py!(
            "import fcntl, array\nfd = os.open('{OUT}/victim.txt', os.O_RDONLY)\nbuf = array.array('l', [0])\nfcntl.ioctl(fd, 0x80086601, buf, True)\nfcntl.ioctl(fd, 0x40086602, buf, True)\nhit()"
        ),
        &[Check::Marker],
    ),
    v(
        "W16",
        Write,
        "change an outside file's time",
        "touch -d 2001-01-01 {OUT}/victim.txt",
    ),
    v(
        "W17",
        Write,
        "truncate an outside file",
        "truncate -s 0 {OUT}/victim.txt",
    ),
    v(
        "W18",
        Write,
        "cp into an outside folder",
        "cp README {OUT}/",
    ),
    v("W19", Write, "mkdir outside", "mkdir {OUT}/newdir"),
    v(
        "W20",
        Write,
        "write the host's /tmp",
        "echo pwned > /tmp/escape-{TAG}",
    ),
    v(
        "W21",
        Write,
        "write the host's /dev/shm",
        "echo pwned > /dev/shm/escape-{TAG}",
    ),
    v(
        "W22",
        Write,
        "append to ~/.bashrc",
        "echo 'export PATH=/tmp/evil:$PATH' >> ~/.bashrc",
    ),
    v(
        "W23",
        Write,
        "plant ~/.ssh/authorized_keys",
        "echo 'ssh-ed25519 AAAAC3Nza attacker' >> ~/.ssh/authorized_keys",
    ),
    v(
        "W24",
        Write,
        "git config --global",
        "git config --global core.pager 'sh -c evil'",
    ),
    v(
        "W25",
        Write,
        "plant .git/hooks/pre-commit",
        "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    ),
    v(
        "W26",
        Write,
        "git config core.hooksPath (.git/config)",
        "git config core.hooksPath /tmp/evil-hooks",
    ),
    v(
        "W27",
        Write,
        "append to .git/config directly",
        "printf '[core]\\n\\tfsmonitor = touch /tmp/evil\\n' >> .git/config",
    ),
    v(
        "W28",
        Write,
        "write through /proc/self/root",
        "echo pwned > /proc/self/root{OUT}/victim.txt",
    ),
    v(
        "W29",
        Write,
        "write through /proc/self/cwd/..",
        "echo pwned > /proc/self/cwd/{OUTREL}/victim.txt",
    ),
    v(
        "W30",
        Write,
        "sed -i an outside file (temp file + rename)",
        "sed -i s/original/pwned/ {OUT}/victim.txt",
    ),
    v(
        "W31",
        Write,
        "plant an autostart entry in ~/.config",
        "mkdir -p ~/.config/autostart && echo pwned > ~/.config/autostart/evil.desktop",
    ),
    v(
        "W34",
        Write,
        "replace .git/config with a new file",
        "mv .git/config .git/config.bak && printf '[core]\\n\\thooksPath = /tmp/evil\\n' > .git/config",
    ),
    v(
        "W35",
        Write,
        "move .git aside and plant a hook in a fresh .git",
        "mv .git .git-old && git init -q && printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    ),
    v(
        "W36",
        Write,
        "swap .git/config for a symlink to an outside file (the undo must not write through it)",
        "rm .git/config && ln -s {OUT}/victim.txt .git/config",
    ),
    v(
        "W37",
        Write,
        "swap .git/hooks for a symlink to an outside folder (the undo must not write through it)",
        "rm -rf .git/hooks && ln -s {OUT} .git/hooks",
    ),
    v(
        "W38",
        Write,
        "swap the private TMPDIR for a symlink to an outside folder (its removal must not follow it)",
        "if [ -n \"$TMPDIR\" ] && [ \"$TMPDIR\" != /tmp ]; then rm -rf \"$TMPDIR\" && ln -s {OUT} \"$TMPDIR\"; fi",
    ),
    v(
        "W39",
        Write,
        "leave a symlink to an outside folder in the temporary folder (its removal must not follow it)",
        "ln -s {OUT} \"${TMPDIR:-/tmp}/escape-{TAG}\"",
    ),
    v(
        "W40",
        Write,
        "point .git/commondir at a copy with a planted hook (git reads config and hooks from there)",
        "cp -r .git evil && printf '#!/bin/sh\\necho pwned\\n' > evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit && echo ../evil > .git/commondir",
    ),
    // Breakout review E1, E2: git control files beyond .git/config and
    // .git/hooks, run by the user's next git command on the host.
    with(
        "W43",
        Write,
        "a nested repository (a gitlink) with core.fsmonitor, run by the host's git status",
        NONE,
        "git init -q sub && git -C sub -c user.email=a@b -c user.name=a commit -q --allow-empty -m x && git add sub && git -C sub config core.fsmonitor 'echo pwned >> {OUT}/git-ran; false'",
        &[Check::HostGit("git status --porcelain")],
    ),
    with(
        "W44",
        Write,
        "a submodule's .git/modules/<name>/config with core.fsmonitor and a hook",
        NONE,
        "mkdir -p .git/modules && git init -q --separate-git-dir=.git/modules/m m && git -C m -c user.email=a@b -c user.name=a commit -q --allow-empty -m x && git add m && git -C m config core.fsmonitor 'echo pwned >> {OUT}/git-ran; false' && printf '#!/bin/sh\necho pwned >> {OUT}/git-ran\n' > .git/modules/m/hooks/pre-commit && chmod +x .git/modules/m/hooks/pre-commit",
        &[Check::HostGit(
            "git status --porcelain; git -C m -c user.email=a@b -c user.name=a commit -q --allow-empty -m y",
        )],
    ),
    with(
        "W45",
        Write,
        "a hook in the workspace folder core.hooksPath names (husky's .husky)",
        GIT_POINTERS,
        "printf '#!/bin/sh\necho pwned >> {OUT}/git-ran\n' > .husky/pre-commit && chmod +x .husky/pre-commit",
        &[Check::HostGit("git commit -q --allow-empty -m x")],
    ),
    with(
        "W46",
        Write,
        "core.fsmonitor appended to the workspace file include.path names",
        GIT_POINTERS,
        "printf '[core]\n\tfsmonitor = echo pwned >> {OUT}/git-ran; false\n' >> .gitconfig-project",
        &[Check::HostGit("git status --porcelain")],
    ),
    // Breakout review E7: a writable path that holds hidden ones.
    flags(
        v(
            "W41",
            Write,
            "--sandbox-write ~: read ~/.ssh/id_rsa, append to ~/.ssh/authorized_keys, move ~/.aws aside",
            "cat ~/.ssh/id_rsa > stolen; echo ssh-rsa PWNED >> ~/.ssh/authorized_keys; mv ~/.aws ~/.aws-moved",
        ),
        &["--sandbox-write", "{HOME}"],
    ),
    flags(
        v(
            "W42",
            Write,
            "--sandbox-write ~/.cargo: read and replace ~/.cargo/credentials.toml",
            "cat ~/.cargo/credentials.toml > stolen; echo 'token = \"x\"' > ~/.cargo/credentials.toml",
        ),
        &["--sandbox-write", "{HOME}/.cargo"],
    ),
    with(
        "W32",
        Write,
        "plant a file in the program's private state",
        NONE,
        "mkdir -p {STATE}/agent-tools && echo pwned > {STATE}/agent-tools/planted",
        &[Check::Exists("{STATE}/agent-tools/planted")],
    ),
    with(
        "W33",
        Write,
        "plant a file in the program's private runtime folder",
        NONE,
        "mkdir -p {RUN}/agent-tools && echo pwned > {RUN}/agent-tools/planted",
        &[Check::Exists("{RUN}/agent-tools/planted")],
    ),
    // ---- secret reads --------------------------------------------------
    v(
        "S01",
        Secret,
        "read ~/.ssh/id_rsa",
        "cat ~/.ssh/id_rsa > stolen",
    ),
    v(
        "S02",
        Secret,
        "read ~/.aws/credentials",
        "cat ~/.aws/credentials > stolen",
    ),
    v("S03", Secret, "read ~/.netrc", "cat ~/.netrc > stolen"),
    v(
        "S04",
        Secret,
        "read ~/.config/gh/hosts.yml",
        "cat ~/.config/gh/hosts.yml > stolen",
    ),
    v(
        "S05",
        Secret,
        "read ~/.docker/config.json",
        "cat ~/.docker/config.json > stolen",
    ),
    v(
        "S06",
        Secret,
        "read ~/.kube/config",
        "cat ~/.kube/config > stolen",
    ),
    v(
        "S07",
        Secret,
        "read ~/.git-credentials",
        "cat ~/.git-credentials > stolen",
    ),
    v("S08", Secret, "read ~/.npmrc", "cat ~/.npmrc > stolen"),
    v("S09", Secret, "read ~/.pypirc", "cat ~/.pypirc > stolen"),
    v(
        "S10",
        Secret,
        "read $CARGO_HOME/credentials.toml",
        "cat \"$CARGO_HOME/credentials.toml\" > stolen",
    ),
    v(
        "S25",
        Secret,
        "read ~/.gnupg",
        "cat ~/.gnupg/private-keys-v1.d/escape.key > stolen",
    ),
    v(
        "S26",
        Secret,
        "read $CARGO_HOME/credentials (legacy name)",
        "cat \"$CARGO_HOME/credentials\" > stolen",
    ),
    with(
        "S27",
        Secret,
        "read a hidden folder through a descriptor `tool` inherited from its parent",
        Needs {
            inherited_fd: true,
            ..NONE
        },
        "for f in /proc/self/fd/*; do cat \"$f/id_rsa\" 2>/dev/null; done > stolen",
        &[],
    ),
    v(
        "S11",
        Secret,
        "a token in the tool's environment (env)",
        "env > stolen",
    ),
    v(
        "S12",
        Secret,
        "the tool's environment via /proc/$PPID/environ",
        "tr '\\0' '\\n' < /proc/$PPID/environ > stolen",
    ),
    v(
        "S13",
        Secret,
        "walk ancestors' /proc/<pid>/environ",
        "p=$$; while [ \"$p\" -gt 1 ]; do tr '\\0' '\\n' < /proc/$p/environ; p=$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f2); done > stolen 2>/dev/null",
    ),
    v(
        "S14",
        Secret,
        "every /proc/*/environ",
        "cat /proc/[0-9]*/environ > stolen 2>/dev/null",
    ),
    v(
        "S15",
        Secret,
        "grep -r the home folder",
        "grep -r . ~ > stolen 2>/dev/null",
    ),
    with(
        "S16",
        Secret,
        "read through a planted symlink",
        Needs {
            symlink_secret: true,
            ..NONE
        },
        "cat planted-secret > stolen",
        &[],
    ),
    v(
        "S17",
        Secret,
        "read through a self-made symlink",
        "ln -s ~/.ssh/id_rsa key && cat key > stolen",
    ),
    with(
        "S18",
        Secret,
        "read through a planted hard link",
        Needs {
            hardlink_secret: true,
            ..NONE
        },
        "cat planted-hard-secret > stolen",
        &[],
    ),
    v(
        "S19",
        Secret,
        "self-made hard link to a secret",
        "ln ~/.kube/config kc; cat kc > stolen",
    ),
    with(
        "S20",
        Secret,
        "another process's /proc/<pid>/environ",
        VICTIM,
        "tr '\\0' '\\n' < /proc/{VPID}/environ > stolen",
        &[],
    ),
    with(
        "S21",
        Secret,
        "another process's /proc/<pid>/root",
        VICTIM,
        "cat /proc/{VPID}/root{HOME}/.aws/credentials > stolen",
        &[],
    ),
    with(
        "S22",
        Secret,
        "another process's /proc/<pid>/cwd",
        VICTIM,
        "cat /proc/{VPID}/cwd/id_rsa > stolen",
        &[],
    ),
    with(
        "S23",
        Secret,
        "another process's open fd",
        VICTIM,
        "cat /proc/{VPID}/fd/{VFD} > stolen",
        &[],
    ),
    with(
        "S24",
        Secret,
        "a deleted file another process holds open",
        VICTIM,
        "cat /proc/{VPID}/fd/{VDELFD} > stolen",
        &[],
    ),
    // Breakout review E9: another configuration's private tree.
    v(
        "S30",
        Secret,
        "another configuration's job output (~/.local/state/agent-tools while XDG_STATE_HOME is elsewhere)",
        "cat ~/.local/state/agent-tools/job-output/*/output > stolen",
    ),
    // Breakout review E4: the files `tool` itself reads secrets from.
    flags(
        with(
            "S28",
            Secret,
            "the --secrets store itself (cat into the workspace; masking only sees output)",
            TOOL_SECRET_FILES,
            "cat {HOME}/.config/agent/secrets.json > stolen; rev {HOME}/.config/agent/secrets.json | rev > stolen2",
            &[],
        ),
        &["--secrets", "{HOME}/.config/agent/secrets.json"],
    ),
    flags(
        with(
            "S29",
            Secret,
            "the --mcp-config file with a server's env",
            TOOL_SECRET_FILES,
            "cat {HOME}/.config/agent/mcp.json > stolen",
            &[],
        ),
        &["--mcp-config", "{HOME}/.config/agent/mcp.json"],
    ),
    // ---- network ---------------------------------------------------------
    v(
        "N01",
        Network,
        "TCP v4 to a loopback listener (bash /dev/tcp)",
        "echo hi > /dev/tcp/127.0.0.1/{TCP4}",
    ),
    v(
        "N02",
        Network,
        "TCP v6 to a loopback listener (bash /dev/tcp)",
        "echo hi > /dev/tcp/::1/{TCP6}",
    ),
    v(
        "N03",
        Network,
        "TCP v4 from Python",
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {TCP4}), 2).sendall(b'hi')\"",
    ),
    req(
        v(
            "N04",
            Network,
            "HTTP over TCP v4 (curl)",
            "curl -s -m 1 http://127.0.0.1:{TCP4}/",
        ),
        &["curl"],
    ),
    req(
        v(
            "N05",
            Network,
            "HTTP over TCP v6 (curl)",
            "curl -s -m 1 -g 'http://[::1]:{TCP6}/'",
        ),
        &["curl"],
    ),
    v(
        "N06",
        Network,
        "UDP v4 (bash /dev/udp)",
        "echo hi > /dev/udp/127.0.0.1/{UDP4}",
    ),
    v(
        "N07",
        Network,
        "UDP v6 from Python",
        "python3 -c \"import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(b'hi', ('::1', {UDP6}))\"",
    ),
    v(
        "N08",
        Network,
        "a DNS query to a local resolver",
        "python3 - <<'PY'\nimport socket, struct\nq = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0) + b'\\x07example\\x03com\\x00' + struct.pack('>HH', 1, 1)\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(q, ('127.0.0.1', {UDP4}))\nPY",
    ),
    v(
        "N09",
        Network,
        "a Unix socket by path",
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{OUT}/agent.sock'); s.sendall(b'hi')\"",
    ),
    v(
        "N10",
        Network,
        "an abstract Unix socket",
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect(b'\\0{ABSTRACT}'); s.sendall(b'hi')\"",
    ),
    with(
        "N11",
        Network,
        "listen for inbound TCP",
        Needs {
            inbound: true,
            ..NONE
        },
        "python3 - <<'PY'\nimport socket\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\ns.bind(('0.0.0.0', {INPORT}))\ns.listen(1)\ns.settimeout(3)\nc, _ = s.accept()\nc.sendall(b'in')\nPY",
        &[Check::Inbound],
    ),
    v(
        "N12",
        Network,
        "send ~/.ssh/id_rsa to a listener",
        "cat ~/.ssh/id_rsa > /dev/tcp/127.0.0.1/{TCP4}",
    ),
    v(
        "N13",
        Network,
        "the SSH agent's socket ($SSH_AUTH_SOCK in $XDG_RUNTIME_DIR)",
        "python3 -c \"import os, socket; s = socket.socket(socket.AF_UNIX); s.connect(os.environ.get('SSH_AUTH_SOCK') or '{RUN}/ssh-agent.sock'); s.sendall(b'hi')\"",
    ),
    req(
        flags(
            v(
                "N14",
                Network,
                "through the allowlist's proxy to a loopback listener (--allow-net example.com)",
                "curl -s -m 3 http://127.0.0.1:{TCP4}/",
            ),
            &["--allow-net", "example.com"],
        ),
        &["curl"],
    ),
    req(
        flags(
            v(
                "N15",
                Network,
                "CONNECT through the allowlist's proxy to localhost (--allow-net example.com)",
                "curl -s -m 3 -p -x \"${HTTPS_PROXY:-${HTTP_PROXY:-http://127.0.0.1:9}}\" http://localhost:{TCP4}/",
            ),
            &["--allow-net", "example.com"],
        ),
        &["curl"],
    ),
    flags(
        v(
            "N16",
            Network,
            "around the allowlist's proxy, straight to a loopback listener (--allow-net example.com)",
            "echo hi > /dev/tcp/127.0.0.1/{TCP4}",
        ),
        &["--allow-net", "example.com"],
    ),
    // ---- other processes ---------------------------------------------------
    with(
        "P01",
        Process,
        "SIGTERM another process",
        VICTIM,
        "kill -TERM {VPID}",
        &[],
    ),
    with(
        "P02",
        Process,
        "SIGKILL another process",
        VICTIM,
        "kill -KILL {VPID}",
        &[],
    ),
    with(
        "P03",
        Process,
        "SIGSTOP another process",
        VICTIM,
        "kill -STOP {VPID}",
        &[],
    ),
    with(
        "P04",
        Process,
        "SIGKILL through a pidfd",
        VICTIM,
        "python3 -c \"import os, signal; signal.pidfd_send_signal(os.pidfd_open({VPID}), signal.SIGKILL)\"",
        &[],
    ),
    with(
        "P05",
        Process,
        "ptrace-attach and read its memory",
        VICTIM,
        scan_victim!("ptrace"),
        &[],
    ),
    with(
        "P06",
        Process,
        "read /proc/<pid>/mem",
        VICTIM,
        scan_victim!("mem"),
        &[],
    ),
    with(
        "P07",
        Process,
        "process_vm_readv",
        VICTIM,
        scan_victim!("vm"),
        &[],
    ),
    req(
        with(
            "P08",
            Process,
            "strace -p its writes",
            VICTIM,
            "timeout 1 strace -p {VPID} -e trace=write -s 200 -o {WS}/strace.txt",
            &[],
        ),
        &["strace", "timeout"],
    ),
    req(
        with(
            "P09",
            Process,
            "gdb -p and kill it",
            VICTIM,
            "gdb -q -p {VPID} -batch -ex kill >/dev/null 2>&1",
            &[],
        ),
        &["gdb"],
    ),
    with(
        "P10",
        Process,
        "renice it",
        VICTIM,
        "renice -n 19 -p {VPID}",
        &[],
    ),
    req(
        with(
            "P11",
            Process,
            "prlimit it",
            VICTIM,
            "prlimit --pid {VPID} --nofile=16:16",
            &[],
        ),
        &["prlimit"],
    ),
    // ---- persistence -------------------------------------------------------
    with(
        "X01",
        Persistence,
        "nohup a job",
        NONE,
        concat!("nohup ", survivor!(), " &"),
        &[Check::Survivor],
    ),
    with(
        "X02",
        Persistence,
        "setsid a job",
        NONE,
        concat!("setsid ", survivor!(), " &"),
        &[Check::Survivor],
    ),
    with(
        "X03",
        Persistence,
        "double fork",
        NONE,
        concat!("( (", survivor!(), " &) & )"),
        &[Check::Survivor],
    ),
    with(
        "X04",
        Persistence,
        "disown a job",
        NONE,
        concat!(survivor!(), " & disown"),
        &[Check::Survivor],
    ),
    with(
        "X05",
        Persistence,
        "kill -9 $PPID (the supervisor), then setsid",
        NONE,
        concat!("(setsid ", survivor!(), " &); kill -9 $PPID"),
        &[Check::Survivor],
    ),
    with(
        "X06",
        Persistence,
        "a job that ignores HUP, TERM and INT",
        NONE,
        "sh -c 'trap \"\" HUP TERM INT; sleep 2; echo alive > {WS}/alive; : {TAG}' >/dev/null 2>&1 </dev/null &",
        &[Check::Survivor],
    ),
    with(
        "X07",
        Persistence,
        "a daemon (fork, setsid, fork) from Python",
        NONE,
        "python3 - {TAG} <<'PY'\nimport os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        for fd in range(3):\n            os.close(fd)\n        os.execvp('sh', ['sh', '-c', 'sleep 2; echo alive > {WS}/alive; : {TAG}'])\n    os._exit(0)\nPY",
        &[Check::Survivor],
    ),
    req(
        with(
            "X08",
            Persistence,
            "systemd-run --user a job",
            NONE,
            "systemd-run --user --quiet sh -c 'sleep 2; echo alive > {WS}/alive; : {TAG}' >/dev/null 2>&1",
            &[Check::Survivor],
        ),
        &["systemd-run"],
    ),
    req(
        with(
            "X09",
            Persistence,
            "crontab an entry",
            NONE,
            "(crontab -l 2>/dev/null; echo '* * * * * echo alive > {WS}/alive # {TAG}') | crontab -",
            &[Check::Survivor],
        ),
        &["crontab"],
    ),
    req(
        with(
            "X10",
            Persistence,
            "at a job",
            NONE,
            "echo 'echo alive > {WS}/alive # {TAG}' | at now",
            &[Check::Survivor],
        ),
        &["at"],
    ),
    // ---- kernel surfaces ---------------------------------------------------
    with(
        "K01",
        Kernel,
        "io_uring_setup (judge: marker when it returns a ring)",
        NONE,
        py!("r, e = sc(425, 8, ctypes.create_string_buffer(120))\nif r >= 0: hit()"),
        &[Check::Marker],
    ),
    with(
        "K02",
        Kernel,
        "bpf(BPF_MAP_CREATE) (judge: marker when it returns a map)",
        NONE,
        py!(
            "a = ctypes.create_string_buffer(struct.pack('<IIII', 2, 4, 4, 1), 128)\nr, e = sc(321, 0, a, 128)\nif r >= 0: hit()"
        ),
        &[Check::Marker],
    ),
    with(
        "K03",
        Kernel,
        "perf_event_open on itself (judge: marker when it returns an event)",
        NONE,
        py!(
            "a = ctypes.create_string_buffer(struct.pack('<IIQ', 1, 128, 0), 128)\nr, e = sc(298, a, 0, -1, -1, 0)\nif r >= 0: hit()"
        ),
        &[Check::Marker],
    ),
    with(
        "K04",
        Kernel,
        "userfaultfd (user-mode only) (judge: marker when it returns an fd)",
        NONE,
        py!("r, e = sc(323, 1 | 0o2000000)\nif r >= 0: hit()"),
        &[Check::Marker],
    ),
    v(
        "K05",
        Kernel,
        "add_key into the user keyring (judge: the host's /proc/keys)",
        py!("sc(248, b'user', b'escape-{TAG}', b'x', 1, -4)"),
    ),
    with(
        "K06",
        Kernel,
        "keyctl join a new session keyring (judge: marker on success)",
        NONE,
        py!("r, e = sc(250, 1, b'escape-{TAG}')\nif r >= 0: hit()"),
        &[Check::Marker],
    ),
    with(
        "K07",
        Kernel,
        "personality(ADDR_NO_RANDOMIZE | READ_IMPLIES_EXEC) (judge: marker when the flags stick)",
        NONE,
        py!("L.personality(0x0440000)\nif L.personality(0xffffffff) & 0x0440000: hit()"),
        &[Check::Marker],
    ),
    with(
        "K08",
        Kernel,
        "unshare -U (judge: marker written from inside)",
        NONE,
        "unshare -U sh -c 'echo 1 > {WS}/escaped'",
        &[Check::Marker],
    ),
    with(
        "K09",
        Kernel,
        "unshare -m (judge: marker written from inside)",
        NONE,
        "unshare -m sh -c 'echo 1 > {WS}/escaped'",
        &[Check::Marker],
    ),
    v(
        "K10",
        Kernel,
        "mount a tmpfs (judge: the host's mountinfo)",
        "mkdir -p m && mount -t tmpfs none {WS}/m",
    ),
    v(
        "K11",
        Kernel,
        "bind-mount an outside folder and write through it",
        "mkdir -p b && mount --bind {OUT} {WS}/b && echo pwned > b/victim.txt",
    ),
    with(
        "K12",
        Kernel,
        "TIOCSTI into the test's terminal (judge: bytes reached it)",
        Needs { pty: true, ..NONE },
        "python3 - <<'PY'\nimport fcntl, os, termios\nfd = os.open('{PTS}', os.O_RDWR | os.O_NOCTTY)\nfor c in b'Z\\n':\n    fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))\nPY",
        &[],
    ),
    with(
        "K13",
        Kernel,
        "kexec_file_load (judge: marker when not refused with EPERM/ENOSYS)",
        NONE,
        py!("r, e = sc(320, -1, -1, 0, 0, 0)\nif e not in (1, 38): hit()"),
        &[Check::Marker],
    ),
    with(
        "K14",
        Kernel,
        "init_module/finit_module (judge: marker when not refused with EPERM/ENOSYS)",
        NONE,
        py!(
            "r, e = sc(175, ctypes.create_string_buffer(64), 64, b'')\nfd = os.open('/dev/null', os.O_RDONLY)\nr2, e2 = sc(313, fd, b'', 0)\nif e not in (1, 38) or e2 not in (1, 38): hit()"
        ),
        &[Check::Marker],
    ),
    v(
        "K15",
        Kernel,
        "mknod a character device (judge: a device node in the workspace)",
        "mknod {WS}/nulldev c 1 3",
    ),
    with(
        "K16",
        Kernel,
        "chroot (judge: marker written after it succeeded)",
        NONE,
        "python3 - <<'PY'\nimport os\nfd = os.open('{WS}/escaped', os.O_WRONLY | os.O_CREAT, 0o644)\nos.chroot('{WS}')\nos.write(fd, b'1')\nPY",
        &[Check::Marker],
    ),
    req(
        with(
            "K17",
            Kernel,
            "nsenter another process's namespaces and write outside",
            VICTIM,
            "nsenter -t {VPID} -m -p sh -c 'echo pwned > {OUT}/victim.txt'",
            &[],
        ),
        &["nsenter"],
    ),
    with(
        "K18",
        Kernel,
        "write a kernel setting in /proc/sys (judge: the host's value; restored)",
        NONE,
        "v=$(cat /proc/sys/kernel/printk_ratelimit_burst); echo $((v + 1)) > /proc/sys/kernel/printk_ratelimit_burst",
        &[Check::HostFileSame(
            "/proc/sys/kernel/printk_ratelimit_burst",
        )],
    ),
    with(
        "K19",
        Kernel,
        "move itself to the root cgroup (out of the sandbox's limits) (judge: marker when the write succeeded)",
        NONE,
        "for f in /sys/fs/cgroup/pids/cgroup.procs /sys/fs/cgroup/unified/cgroup.procs /sys/fs/cgroup/cgroup.procs; do [ -e $f ] && echo $$ > $f && echo 1 > {WS}/escaped; done; true",
        &[Check::Marker],
    ),
    with(
        "K20",
        Kernel,
        "read a raw block device (every file on the disk) (judge: marker when 512 bytes were read)",
        NONE,
        "for d in /dev/vda /dev/sda /dev/nvme0n1 /dev/xvda; do [ -b \"$d\" ] && head -c 512 \"$d\" > /dev/null 2>&1 && echo 1 > {WS}/escaped; done; true",
        &[Check::Marker],
    ),
    // Breakout review E11: socket families no network namespace covers.
    with(
        "K22",
        Kernel,
        "socket(AF_VSOCK) toward the hypervisor (judge: marker when the socket was made)",
        NONE,
        py!("import socket\ns = socket.socket(40, socket.SOCK_STREAM)\nhit()"),
        &[Check::Marker],
    ),
    with(
        "K21",
        Kernel,
        "TIOCLINUX on the console (judge: marker when the ioctl answered)",
        NONE,
        py!(
            "import fcntl\nfd = os.open('/dev/tty0', os.O_RDONLY | os.O_NOCTTY)\nfcntl.ioctl(fd, 0x541C, bytes([12]))\nhit()"
        ),
        &[Check::Marker],
    ),
    // ---- resource limits ---------------------------------------------------
    with(
        "L01",
        Limit,
        "a fork tree of 128 live processes (judge: lines in a counter file, one per process)",
        NONE,
        // Python's fork does not retry on EAGAIN (bash's does, until earlier
        // children have ended): 8 children of 15 grandchildren each, every
        // one adding its line and staying alive 3 s.
        "python3 - <<'PY'\nimport os, time\ndef live():\n    with open('{WS}/count', 'a') as f:\n        f.write('x\\n')\n    time.sleep(3)\n    os._exit(0)\nfor i in range(8):\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        for j in range(15):\n            try:\n                if os.fork() == 0:\n                    live()\n            except OSError:\n                break\n        live()\ntry:\n    while True:\n        os.wait()\nexcept ChildProcessError:\n    pass\nPY",
        &[Check::LinesAtLeast("count", 128)],
    ),
    with(
        "L02",
        Limit,
        "a 512 MiB memory balloon (judge: marker after touching every page)",
        NONE,
        "python3 -c \"b = bytearray(512 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nopen('{WS}/escaped', 'w').write('1')\"",
        &[Check::Marker],
    ),
    with(
        "L05",
        Limit,
        "a 640 MiB balloon spread over 4 processes of 160 MiB (judge: lines in a file, one per process holding its share)",
        NONE,
        "python3 - <<'PY'\nimport os, time\nfor i in range(4):\n    if os.fork() == 0:\n        b = bytearray(160 << 20)\n        for j in range(0, len(b), 4096):\n            b[j] = 1\n        with open('{WS}/held', 'a') as f:\n            f.write('x\\n')\n        time.sleep(2)\n        os._exit(0)\ntry:\n    while True:\n        os.wait()\nexcept ChildProcessError:\n    pass\nPY",
        &[Check::LinesAtLeast("held", 4)],
    ),
    with(
        "L03",
        Limit,
        "a 1 GiB file by dd (judge: its size)",
        NONE,
        "dd if=/dev/zero of={WS}/big bs=1M count=1 seek=1023 status=none",
        &[Check::SizeAtLeast("big", 1 << 30)],
    ),
    with(
        "L04",
        Limit,
        "a 1 GiB file by truncate (judge: its size)",
        NONE,
        "truncate -s 1G {WS}/big",
        &[Check::SizeAtLeast("big", 1 << 30)],
    ),
];

/// What must keep working inside the sandbox.
pub(crate) const SANITY: &[Vector] = &[
    with(
        "C01",
        Sanity,
        "git status",
        NONE,
        "git status -sb > st.txt",
        &[Check::FileStarts("st.txt", "## ")],
    ),
    with(
        "C02",
        Sanity,
        "git commit",
        NONE,
        "echo change > f.txt && git add f.txt && git commit -qm sanity",
        &[Check::Commits(1)],
    ),
    with(
        "C03",
        Sanity,
        "python3 -c",
        NONE,
        "python3 -c 'print(6 * 7)' > py.txt",
        &[Check::FileIs("py.txt", "42\n")],
    ),
    with(
        "C04",
        Sanity,
        "cargo --version",
        NONE,
        "cargo --version > cargo.txt",
        &[Check::FileStarts("cargo.txt", "cargo 1.")],
    ),
    with(
        "C05",
        Sanity,
        "pipes",
        NONE,
        "printf 'b\\na\\n' | sort | tr a-z A-Z > pipe.txt",
        &[Check::FileIs("pipe.txt", "A\nB\n")],
    ),
    with(
        "C06",
        Sanity,
        "subshells",
        NONE,
        "x=$( (echo one; echo two) | wc -l ); echo \"sub $x\" > sub.txt",
        &[Check::FileIs("sub.txt", "sub 2\n")],
    ),
    with(
        "C07",
        Sanity,
        "mktemp",
        NONE,
        "t=$(mktemp) && echo tmpok > \"$t\" && cat \"$t\" > mk.txt && rm \"$t\"",
        &[Check::FileIs("mk.txt", "tmpok\n")],
    ),
    with(
        "C08",
        Sanity,
        "read /usr",
        NONE,
        "wc -c < /usr/bin/env > usr.txt",
        &[Check::SizeOfHost("usr.txt", "/usr/bin/env")],
    ),
    with(
        "C09",
        Sanity,
        "read /etc/os-release",
        NONE,
        "cat /etc/os-release > os.txt",
        &[Check::SameAsHost("os.txt", "/etc/os-release")],
    ),
    with(
        "C10",
        Sanity,
        "write the workspace and /dev/null",
        NONE,
        "echo ok > /dev/null && mkdir -p a/b && echo deep > a/b/c.txt",
        &[Check::FileIs("a/b/c.txt", "deep\n")],
    ),
    flags(
        with(
            "C11",
            Sanity,
            "a command with a network allowlist (--allow-net example.com)",
            NONE,
            "echo ok > net.txt",
            &[Check::FileIs("net.txt", "ok\n")],
        ),
        &["--allow-net", "example.com"],
    ),
];

/// The vector with this id, escape or sanity.
pub(crate) fn by_id(id: &str) -> Option<&'static Vector> {
    VECTORS.iter().chain(SANITY).find(|v| v.id == id)
}
