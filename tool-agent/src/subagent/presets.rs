//! Sub-agent presets (`agent_type`) and skills.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// One preset: the system prompt, the tool patterns and the default skills
/// of an `agent_type`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Preset {
    /// The system prompt (a file's text when the file form was used).
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// Tool name patterns to keep (`*` is any run of characters, as in
    /// [`NamePattern`](tool_core::NamePattern)); empty keeps every tool the mode allows.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Tool name patterns to leave out; they win over `allow`.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Skills appended to the system prompt unless the call names its own.
    #[serde(default)]
    pub skills: Vec<String>,
}

impl Preset {
    /// A preset with this system prompt.
    pub fn new(system_prompt: impl Into<String>) -> Self {
        Self {
            system_prompt: Some(system_prompt.into()),
            ..Self::default()
        }
    }

    /// Sets the allow patterns.
    pub fn allow(mut self, patterns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allow = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the deny patterns.
    pub fn deny(mut self, patterns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.deny = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the default skills.
    pub fn skills(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.skills = names.into_iter().map(Into::into).collect();
        self
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetFile {
    #[serde(default)]
    system_prompt: Option<String>,
    #[serde(default)]
    system_prompt_file: Option<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    skills: Vec<String>,
}

/// The presets an `agent` call can name with `agent_type`.
///
/// The file form is JSON: `{"<name>": {"system_prompt": "…" |
/// "system_prompt_file": "<path>", "allow": [...], "deny": [...], "skills":
/// [...]}}`; a relative `system_prompt_file` is read from the presets file's
/// folder, when the file is loaded. Unknown keys are refused.
///
/// ```
/// use tool_agent::subagent::Presets;
/// let presets = Presets::from_json(r#"{"reviewer": {"system_prompt": "Review.", "allow": ["read_*"]}}"#, None)?;
/// assert_eq!(presets.get("reviewer")?.allow, ["read_*"]);
/// assert!(presets.get("reviewr").unwrap_err().contains("did you mean `reviewer`"));
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Presets {
    map: BTreeMap<String, Preset>,
}

impl Presets {
    /// No presets.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) preset `name`.
    pub fn insert(&mut self, name: impl Into<String>, preset: Preset) {
        self.map.insert(name.into(), preset);
    }

    /// Reads a presets file (see the type docs).
    ///
    /// # Errors
    /// A message naming the file and the problem.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, String> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("presets file {}: {e}", path.display()))?;
        Self::from_json(&text, path.parent())
            .map_err(|e| format!("presets file {}: {e}", path.display()))
    }

    /// Reads presets from JSON text; `base` is the folder relative
    /// `system_prompt_file`s are read from (the current folder when `None`).
    ///
    /// # Errors
    /// JSON that is not a presets object, a preset with both prompt forms, an
    /// unreadable prompt file.
    pub fn from_json(text: &str, base: Option<&Path>) -> Result<Self, String> {
        let raw: BTreeMap<String, PresetFile> =
            serde_json::from_str(text).map_err(|e| format!("not a presets object: {e}"))?;
        let mut map = BTreeMap::new();
        for (name, p) in raw {
            let system_prompt = match (p.system_prompt, p.system_prompt_file) {
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "preset `{name}` sets both `system_prompt` and `system_prompt_file`; keep one"
                    ));
                }
                (Some(s), None) => Some(s),
                (None, Some(file)) => {
                    let path =
                        base.map_or_else(|| Path::new(&file).to_path_buf(), |b| b.join(&file));
                    Some(std::fs::read_to_string(&path).map_err(|e| {
                        format!(
                            "preset `{name}`: system_prompt_file {}: {e}",
                            path.display()
                        )
                    })?)
                }
                (None, None) => None,
            };
            map.insert(
                name,
                Preset {
                    system_prompt,
                    allow: p.allow,
                    deny: p.deny,
                    skills: p.skills,
                },
            );
        }
        Ok(Self { map })
    }

    /// Preset `name`.
    ///
    /// # Errors
    /// A message listing the presets, with a "did you mean" when one is close.
    pub fn get(&self, name: &str) -> Result<&Preset, String> {
        if let Some(p) = self.map.get(name) {
            return Ok(p);
        }
        if self.map.is_empty() {
            return Err(format!(
                "unknown agent_type `{name}`: this host defines no presets; leave agent_type out"
            ));
        }
        let close = tool_rules::suggest::did_you_mean(name, self.map.keys().map(String::as_str))
            .map(|k| format!("; did you mean `{k}`?"))
            .unwrap_or_default();
        Err(format!(
            "unknown agent_type `{name}`{close} Known: {}",
            self.map
                .keys()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    /// The preset names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.map.keys().map(String::as_str).collect()
    }
}

/// Where skill texts come from: the text of skill `name`, appended to a
/// sub-agent's system prompt. Implemented for a name → text map; the
/// skills of `tool-builtins` plug in through this trait.
pub trait SkillSource: Send + Sync {
    /// The text of skill `name`.
    ///
    /// # Errors
    /// A message for the model (unknown skill, unreadable file).
    fn skill(&self, name: &str) -> Result<String, String>;
}

impl SkillSource for BTreeMap<String, String> {
    fn skill(&self, name: &str) -> Result<String, String> {
        self.get(name).cloned().ok_or_else(|| {
            format!(
                "unknown skill `{name}`; known: {}",
                self.keys()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}

/// The skills of `SKILL.md` folders loaded by tool-builtins: a skill's text
/// is its Markdown body, followed by the folder it lives in (its relative
/// paths are relative to that folder).
#[cfg(feature = "builtins")]
impl SkillSource for tool_builtins::skills::SkillSet {
    fn skill(&self, name: &str) -> Result<String, String> {
        match self.get(name) {
            Some(s) => Ok(format!(
                "{}\n\n(Files of this skill are in {}.)",
                s.body,
                s.folder.display()
            )),
            None => Err(format!(
                "unknown skill `{name}`; known: {}",
                self.skills()
                    .iter()
                    .map(|s| format!("`{}`", s.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}
