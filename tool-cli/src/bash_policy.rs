//! `--bash-policy FILE`: allow / ask / deny patterns for `bash_command`, read
//! from JSON into a [`CommandPolicy`] that every call of the run shares.
//!
//! ```json
//! {"default": "allow", "allow": ["git status *"], "ask": ["git push *"], "deny": ["rm -rf *"]}
//! ```
//!
//! Every key is optional; `default` (what a command no pattern matches gets)
//! is `allow` when absent, so `{}` keeps today's behaviour except that command
//! substitution and text the rules cannot see (`eval`, `sh -c`, `… | bash`, a
//! command name that is a variable) need confirmation; with `"default":
//! "deny"` such text is refused. "ask" goes to the approver that `--approve`
//! sets up: `never` (and `read`: `bash_command` is not a read-only tool)
//! refuses, `all` runs the command. See `tool_builtins::shell::policy` for what
//! the rules see through (wrappers such as `env`, `sudo`, `timeout`; shells'
//! `-c`) and what a deny list cannot stop: it is not a sandbox.
//!
//! Limits: each pattern is at most
//! [`MAX_PATTERN_BYTES`](tool_builtins::shell::policy::MAX_PATTERN_BYTES) bytes
//! (256) and the file holds at most
//! [`MAX_POLICY_RULES`](tool_builtins::shell::policy::MAX_POLICY_RULES) patterns
//! (1000) in all; a file beyond them is refused with a message naming the key,
//! the pattern's position and the limit.

use std::path::Path;

use serde_json::Value;
use tool_builtins::{CommandPolicy, PolicyAction};

/// The keys a policy file may have.
const KEYS: [&str; 4] = ["default", "allow", "ask", "deny"];

/// Reads a `--bash-policy` file. Messages name the file and the bad key.
pub(crate) fn load(path: &Path) -> Result<CommandPolicy, String> {
    let text = crate::small_file::read_config(path, "--bash-policy", "a bash policy (JSON)")?;
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
        for (i, p) in patterns.iter().enumerate() {
            let p = p.as_str().filter(|p| !p.trim().is_empty()).ok_or_else(|| {
                let shown: String = p.to_string().chars().take(80).collect();
                format!("`{key}` holds {shown}, not a non-empty pattern string")
            })?;
            policy = policy
                .try_rule(p, act)
                .map_err(|e| format!("`{key}` pattern {} (counting from 1): {e}", i + 1))?;
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

    #[test]
    fn limits_are_named() {
        let err = |v: Value| from_json(&v).unwrap_err();
        let long = "x".repeat(257);
        let e = err(json!({"deny": ["rm *", long]}));
        assert!(e.contains("`deny` pattern 2"), "{e}");
        assert!(
            e.contains("MAX_PATTERN_BYTES") && e.contains("257 bytes"),
            "{e}"
        );
        let e = err(json!({"allow": ["ls *", "x".repeat(10_000)]}));
        assert!(
            e.contains("`allow` pattern 2") && e.contains("MAX_PATTERN_BYTES"),
            "{e}"
        );
        // At the limit: accepted.
        assert!(from_json(&json!({"ask": ["y".repeat(256)]})).is_ok());
        // Too many patterns, counted over all keys.
        let many: Vec<String> = (0..600).map(|i| format!("cmd{i} *")).collect();
        let e = err(json!({"allow": many.clone(), "deny": many}));
        assert!(e.contains("`deny` pattern 401"), "{e}");
        assert!(e.contains("MAX_POLICY_RULES"), "{e}");
        let fine: Vec<String> = (0..1000).map(|i| format!("cmd{i} *")).collect();
        assert!(from_json(&json!({"allow": fine})).is_ok());
        // A huge non-string value is shown cut.
        let e = err(json!({"ask": [{"k": "v".repeat(10_000)}]}));
        assert!(e.len() < 200, "{e}");
    }

    #[test]
    fn bypasses_of_a_deny_list_are_caught() {
        let p = from_json(&json!({"deny": ["rm *"]})).unwrap();
        assert_eq!(p.check("env sh -c \"rm x\"").action, PolicyAction::Deny);
        assert_eq!(p.check("timeout -s KILL 5 rm x").action, PolicyAction::Deny);
        assert_eq!(p.check("echo \"rm x\" | bash").action, PolicyAction::Ask);
        assert_eq!(p.check("x=rm; $x victim").action, PolicyAction::Ask);
        let closed = from_json(&json!({"default": "deny", "allow": ["echo *", "bash *"]})).unwrap();
        assert_eq!(
            closed.check("echo \"rm x\" | bash").action,
            PolicyAction::Deny
        );
    }
}
