//! The patch grammar: `*** Begin Patch` … `*** End Patch`, file headers and
//! `@@` chunks, parsed into [`Hunk`]s before anything is read from disk.

pub(super) const BEGIN: &str = "*** Begin Patch";
pub(super) const END: &str = "*** End Patch";
pub(super) const ADD: &str = "*** Add File: ";
pub(super) const DELETE: &str = "*** Delete File: ";
pub(super) const UPDATE: &str = "*** Update File: ";
pub(super) const MOVE: &str = "*** Move to: ";
pub(super) const EOF_MARK: &str = "*** End of File";

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Hunk {
    Add {
        path: String,
        contents: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

/// One `@@` section of an update.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Chunk {
    /// The text after `@@`: a line to find before the chunk's lines.
    pub(super) context: Option<String>,
    pub(super) old_lines: Vec<String>,
    pub(super) new_lines: Vec<String>,
    /// Per new line, for a context line its index in `old_lines`: the
    /// file's own text of that line is kept, whatever pass matched it.
    pub(super) context_of: Vec<Option<usize>>,
    /// `*** End of File`: the old lines end the file.
    pub(super) end_of_file: bool,
}
/// Removes a heredoc wrapper (`<<EOF`, `<<'EOF'`, `<<"EOF"`, optionally after
/// a command such as `apply_patch`) when its terminator closes the text.
pub(super) fn strip_heredoc(lines: &[&str]) -> Option<(usize, usize)> {
    let first = lines.first()?.trim();
    let opener = &first[first.find("<<")? + 2..];
    let word = opener.trim().trim_matches(|c| c == '\'' || c == '"');
    if word.is_empty() || !word.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let last = lines.len().checked_sub(1)?;
    (last > 0 && lines[last].trim() == word).then_some((1, last))
}

pub(super) fn parse(patch: &str) -> Result<Vec<Hunk>, String> {
    let text = crate::fs::lines::normalize_newlines(patch);
    let text = text.trim();
    let all: Vec<&str> = text.split('\n').collect();
    let (from, to) = strip_heredoc(&all).unwrap_or((0, all.len()));
    let lines = &all[from..to];
    if lines.first().map(|l| l.trim()) != Some(BEGIN) {
        return Err(format!("The first line of the patch must be '{BEGIN}'"));
    }
    if lines.len() < 2 || lines.last().map(|l| l.trim()) != Some(END) {
        return Err(format!("The last line of the patch must be '{END}'"));
    }
    let body = &lines[1..lines.len() - 1];
    // Line numbers in messages count from the patch's first line (1 = Begin Patch).
    let line_no = |i: usize| i + 2;
    let mut hunks = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let header = body[i].trim();
        if header.is_empty() {
            i += 1;
            continue;
        }
        if let Some(path) = header.strip_prefix(ADD) {
            let mut contents = String::new();
            i += 1;
            while i < body.len() {
                let Some(l) = body[i].strip_prefix('+') else {
                    break;
                };
                contents.push_str(l);
                contents.push('\n');
                i += 1;
            }
            hunks.push(Hunk::Add {
                path: path.trim().to_owned(),
                contents,
            });
        } else if let Some(path) = header.strip_prefix(DELETE) {
            hunks.push(Hunk::Delete {
                path: path.trim().to_owned(),
            });
            i += 1;
        } else if let Some(path) = header.strip_prefix(UPDATE) {
            let path = path.trim().to_owned();
            let start = i;
            i += 1;
            let move_to = match body.get(i).and_then(|l| l.trim().strip_prefix(MOVE)) {
                Some(m) => {
                    i += 1;
                    Some(m.trim().to_owned())
                }
                None => None,
            };
            let (chunks, next) = parse_chunks(body, i, &line_no)?;
            if chunks.is_empty() {
                return Err(format!(
                    "invalid hunk at line {}, Update file hunk for path '{path}' is empty",
                    line_no(start)
                ));
            }
            i = next;
            hunks.push(Hunk::Update {
                path,
                move_to,
                chunks,
            });
        } else {
            return Err(format!(
                "invalid hunk at line {}, '{header}' is not a valid hunk header. \
                 Valid hunk headers: '*** Add File: {{path}}', '*** Delete File: {{path}}', '*** Update File: {{path}}'",
                line_no(i)
            ));
        }
    }
    Ok(hunks)
}

/// Whether `line` starts the next file operation (ends an update's chunks).
fn is_header(line: &str) -> bool {
    let t = line.trim();
    t.starts_with(ADD) || t.starts_with(DELETE) || t.starts_with(UPDATE) || t == END
}

fn parse_chunks(
    body: &[&str],
    mut i: usize,
    line_no: &dyn Fn(usize) -> usize,
) -> Result<(Vec<Chunk>, usize), String> {
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut current: Option<Chunk> = None;
    let mut current_start = i;
    let close = |c: Option<Chunk>, start: usize, chunks: &mut Vec<Chunk>| -> Result<(), String> {
        if let Some(c) = c {
            if c.old_lines.is_empty() && c.new_lines.is_empty() {
                return Err(format!(
                    "invalid hunk at line {}, Update hunk does not contain any lines",
                    line_no(start)
                ));
            }
            chunks.push(c);
        }
        Ok(())
    };
    while i < body.len() {
        let line = body[i];
        if is_header(line) {
            break;
        }
        let trimmed = line.trim();
        if trimmed == "@@" || trimmed.starts_with("@@ ") {
            close(current.take(), current_start, &mut chunks)?;
            let ctx = trimmed.strip_prefix("@@").unwrap_or("").trim();
            current = Some(Chunk {
                context: (!ctx.is_empty()).then(|| ctx.to_owned()),
                ..Chunk::default()
            });
            current_start = i;
            i += 1;
            continue;
        }
        if trimmed == EOF_MARK {
            let c = current.get_or_insert_with(Chunk::default);
            c.end_of_file = true;
            close(current.take(), current_start, &mut chunks)?;
            i += 1;
            continue;
        }
        let c = current.get_or_insert_with(|| {
            current_start = i;
            Chunk::default()
        });
        match line.chars().next() {
            Some(' ') | None => {
                let l = line.get(1..).unwrap_or("");
                c.context_of.push(Some(c.old_lines.len()));
                c.old_lines.push(l.to_owned());
                c.new_lines.push(l.to_owned());
            }
            Some('-') => c.old_lines.push(line[1..].to_owned()),
            Some('+') => {
                c.context_of.push(None);
                c.new_lines.push(line[1..].to_owned());
            }
            Some(_) => {
                return Err(format!(
                    "invalid hunk at line {}, Unexpected line found in update hunk: '{line}'. \
                     Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)",
                    line_no(i)
                ));
            }
        }
        i += 1;
    }
    close(current, current_start, &mut chunks)?;
    Ok((chunks, i))
}
