//! `--bash-policy FILE`: allow / ask / deny patterns for `bash_command`, read
//! from JSON into a [`CommandPolicy`] that every call of the run shares.
//!
//! ```json
//! {"default": "allow", "allow": ["git status *"], "ask": ["git push *"], "deny": ["rm -rf *"]}
//! ```
//!
//! Every key is optional; `default` (what a command no pattern matches gets)
//! is `allow` when absent, so `{}` keeps today's behaviour except that command
//! substitution, `eval` and `sh -c` need confirmation. "ask" goes to the
//! approver that `--approve` sets up: `never` (and `read`: `bash_command` is
//! not a read-only tool) refuses, `all` runs the command.

use std::path::Path;

use serde_json::Value;
use tool_builtins::{CommandPolicy, PolicyAction};

/// The keys a policy file may have.
const KEYS: [&str; 4] = ["default", "allow", "ask", "deny"];

/// Reads a `--bash-policy` file. Messages name the file and the bad key.
pub(crate) fn load(path: &Path) -> Result<CommandPolicy, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the bash policy {}: {e}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| format!("the bash policy {} is not valid JSON: {e}", path.display()))?;
    from_json(&value).map_err(|e| format!("the bash policy {}: {e}", path.display()))
}

/// Builds the policy from the file's JSON: rules are added allow, then ask,
/// then deny, so that of two equally specific patterns the stricter wins.
fn from_json(value: &Value) -> Result<CommandPolicy, String> {
    let Some(object) = value.as_object() else {
        return Err(format!(
            "expected a JSON object with the keys {}",
            KEYS.join(", ")
        ));
    };
    if let Some(unknown) = object.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "unknown key `{unknown}` (expected {})",
            KEYS.join(", ")
        ));
    }
    let default = match object.get("default") {
        None => PolicyAction::Allow,
        Some(v) => action(v)
            .ok_or_else(|| format!("`default` must be \"allow\", \"ask\" or \"deny\", not {v}"))?,
    };
    let mut policy = CommandPolicy::new(default);
    for (key, act) in [
        ("allow", PolicyAction::Allow),
        ("ask", PolicyAction::Ask),
        ("deny", PolicyAction::Deny),
    ] {
        let Some(list) = object.get(key) else {
            continue;
        };
        let patterns = list
            .as_array()
            .ok_or_else(|| format!("`{key}` must be a list of patterns"))?;
        for p in patterns {
            let p = p
                .as_str()
                .filter(|p| !p.trim().is_empty())
                .ok_or_else(|| format!("`{key}` holds {p}, not a non-empty pattern string"))?;
            policy = policy.rule(p, act);
        }
    }
    Ok(policy)
}

fn action(v: &Value) -> Option<PolicyAction> {
    match v.as_str()? {
        "allow" => Some(PolicyAction::Allow),
        "ask" => Some(PolicyAction::Ask),
        "deny" => Some(PolicyAction::Deny),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_and_default_from_json() {
        let p = from_json(&json!({
            "allow": ["git *"], "ask": ["git push *"], "deny": ["rm -rf *"]
        }))
        .unwrap();
        assert_eq!(p.default_action(), PolicyAction::Allow);
        assert_eq!(p.check("git status").action, PolicyAction::Allow);
        assert_eq!(p.check("git push origin").action, PolicyAction::Ask);
        assert_eq!(p.check("ls && rm -rf x").action, PolicyAction::Deny);
        assert_eq!(p.check("echo $(date)").action, PolicyAction::Ask);
        let closed = from_json(&json!({"default": "deny"})).unwrap();
        assert_eq!(closed.check("ls").action, PolicyAction::Deny);
    }

    #[test]
    fn mistakes_name_the_key() {
        let err = |v: Value| from_json(&v).unwrap_err();
        assert!(err(json!({"alow": []})).contains("unknown key `alow`"));
        assert!(err(json!({"default": "maybe"})).contains("`default` must be"));
        assert!(err(json!({"deny": "rm *"})).contains("`deny` must be a list"));
        assert!(err(json!({"ask": [1]})).contains("`ask` holds 1"));
        assert!(err(json!([])).contains("expected a JSON object"));
    }
}
