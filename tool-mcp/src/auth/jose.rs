//! The JOSE pieces of the OAuth extensions: compact JWS signing (RFC 7515)
//! for `private_key_jwt` client assertions (RFC 7523 §2.2) and DPoP proofs
//! (RFC 9449), with ES256 (ECDSA P-256, SHA-256) and RS256 keys.
//!
//! Crypto is `ring` 0.17 (already in Cargo.lock; a small, audited,
//! well-kept library): PKCS#8 key parsing, ECDSA and RSA signing, SHA-256,
//! the system random source. A JWS here is only ever *produced* (the
//! authorization and resource servers verify), so a full JOSE crate
//! (`jsonwebtoken`, `josekit`) would add parsing and verification code this
//! client never runs; rmcp's own `private_key_jwt` feature pulls
//! `jsonwebtoken` with aws-lc-rs, a much larger C build.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair};
use serde_json::{Value, json};

/// Largest signing-key file read, in bytes (64 KiB: a 16384-bit RSA key in
/// PEM is under 13 KiB).
pub const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;

/// How long a client assertion is valid, in seconds (60: it is used at once).
const ASSERTION_LIFETIME_SECS: u64 = 60;

/// Base64url without padding (JWS, JWK, `ath`).
pub(crate) fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A fresh random identifier (128 bits, base64url): a JWT's `jti`.
fn random_id() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| "the system random source failed".to_owned())?;
    Ok(b64url(&bytes))
}

/// SHA-256 of `data`, base64url: a DPoP proof's `ath` (RFC 9449 §4.2) and a
/// JWK thumbprint's last step (RFC 7638).
pub(crate) fn sha256_b64url(data: &[u8]) -> String {
    b64url(ring::digest::digest(&ring::digest::SHA256, data).as_ref())
}

/// A private key that signs JWTs: ES256 (P-256) or RS256.
pub(crate) enum SigningKey {
    /// ECDSA P-256 with SHA-256, signatures as the 64-byte `r || s` of JWS.
    Es256(EcdsaKeyPair),
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256(RsaKeyPair),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({}, ***)", self.alg())
    }
}

impl SigningKey {
    /// A new random P-256 key (a DPoP proof key; never written anywhere).
    ///
    /// # Errors
    /// The system random source fails.
    pub(crate) fn generate_es256() -> Result<Self, String> {
        let rng = SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng)
            .map_err(|_| "generating a P-256 key failed".to_owned())?;
        EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng)
            .map(Self::Es256)
            .map_err(|e| format!("generating a P-256 key failed: {e}"))
    }

    /// The key in a PKCS#8 PEM text (`-----BEGIN PRIVATE KEY-----`): an EC
    /// P-256 key (with its public key, as OpenSSL writes it) or an RSA key.
    ///
    /// # Errors
    /// A message (never quoting the key) when the text is not PKCS#8 PEM
    /// (a SEC1 `EC PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY` is named, with
    /// the `openssl pkcs8 -topk8 -nocrypt` that converts it), is encrypted,
    /// or holds another kind of key.
    pub(crate) fn from_pem(pem: &str) -> Result<Self, String> {
        let der = pem_der(pem)?;
        let rng = SystemRandom::new();
        if let Ok(key) =
            EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng)
        {
            return Ok(Self::Es256(key));
        }
        RsaKeyPair::from_pkcs8(&der).map(Self::Rs256).map_err(|_| {
            "the key is neither an EC P-256 key (with its public key) nor an RSA key in \
             PKCS#8"
                .to_owned()
        })
    }

    /// The key in the PEM file at `path`, refused unless only its owner may
    /// read it (no permission bits for group or others, as ssh asks of
    /// private keys), it is a regular file of at most [`MAX_KEY_FILE_BYTES`].
    ///
    /// # Errors
    /// A message naming the path (never the key): unreadable, too large,
    /// readable by others (with the `chmod 600` that fixes it), or not a
    /// usable key ([`SigningKey::from_pem`]).
    pub(crate) fn from_file(path: &Path) -> Result<Self, String> {
        use std::os::unix::fs::PermissionsExt;
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("signing key {shown}: {e}"))?;
        if !meta.is_file() {
            return Err(format!("signing key {shown}: not a regular file"));
        }
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(format!(
                "signing key {shown}: readable by others (mode {mode:03o}); a private key must be \
                 private to its owner: chmod 600 {shown}"
            ));
        }
        if meta.len() > MAX_KEY_FILE_BYTES {
            return Err(format!(
                "signing key {shown}: larger than {MAX_KEY_FILE_BYTES} bytes"
            ));
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("signing key {shown}: {e}"))?;
        Self::from_pem(&text).map_err(|e| format!("signing key {shown}: {e}"))
    }

    /// The JWS `alg` of this key (`ES256` or `RS256`).
    pub(crate) fn alg(&self) -> &'static str {
        match self {
            Self::Es256(_) => "ES256",
            Self::Rs256(_) => "RS256",
        }
    }

    /// The public key as a JWK (RFC 7517), members in the lexicographic
    /// order of RFC 7638 so that its serialization is the thumbprint input.
    pub(crate) fn public_jwk(&self) -> Value {
        match self {
            Self::Es256(key) => {
                // Uncompressed SEC1 point: 0x04 || x (32 bytes) || y (32 bytes).
                let point = key.public_key().as_ref();
                let (x, y) = point
                    .get(1..)
                    .unwrap_or_default()
                    .split_at(32.min(point.len()));
                json!({"crv": "P-256", "kty": "EC", "x": b64url(x), "y": b64url(y)})
            }
            Self::Rs256(key) => {
                let parts = ring::rsa::PublicKeyComponents::<Vec<u8>>::from(key.public());
                json!({"e": b64url(&parts.e), "kty": "RSA", "n": b64url(&parts.n)})
            }
        }
    }

    /// The JWK SHA-256 thumbprint of the public key (RFC 7638), base64url:
    /// what a DPoP-bound token's `cnf.jkt` names.
    #[cfg(test)]
    pub(crate) fn thumbprint(&self) -> String {
        sha256_b64url(self.public_jwk().to_string().as_bytes())
    }

    /// A compact JWS of `claims` with `header` (its `alg` set here).
    ///
    /// # Errors
    /// Signing fails (the random source of ECDSA).
    pub(crate) fn sign(&self, mut header: Value, claims: &Value) -> Result<String, String> {
        header["alg"] = json!(self.alg());
        let input = format!(
            "{}.{}",
            b64url(header.to_string().as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let rng = SystemRandom::new();
        let signature = match self {
            Self::Es256(key) => key
                .sign(&rng, input.as_bytes())
                .map_err(|_| "signing failed".to_owned())?
                .as_ref()
                .to_vec(),
            Self::Rs256(key) => {
                let mut out = vec![0u8; key.public().modulus_len()];
                key.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &rng,
                    input.as_bytes(),
                    &mut out,
                )
                .map_err(|_| "signing failed".to_owned())?;
                out
            }
        };
        Ok(format!("{input}.{}", b64url(&signature)))
    }

    /// A `private_key_jwt` client assertion (RFC 7523 §2.2, §3): `iss` and
    /// `sub` the client id, `aud` the authorization server's issuer, a
    /// random `jti`, `iat` now and `exp` 60 seconds later.
    ///
    /// # Errors
    /// Signing or the random source fails.
    pub(crate) fn client_assertion(
        &self,
        client_id: &str,
        audience: &str,
    ) -> Result<String, String> {
        let now = now_secs();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "jti": random_id()?,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
        });
        self.sign(json!({"typ": "JWT"}), &claims)
    }

    /// A DPoP proof (RFC 9449 §4.2): header `typ: dpop+jwt` with the public
    /// JWK, claims `jti` (random), `htm`, `htu` (`url` without query and
    /// fragment), `iat`, and `ath` (the SHA-256 of `access_token`) and
    /// `nonce` when given.
    ///
    /// # Errors
    /// Signing or the random source fails.
    pub(crate) fn dpop_proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, String> {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let mut claims = json!({
            "jti": random_id()?,
            "htm": method,
            "htu": htu,
            "iat": now_secs(),
        });
        if let Some(token) = access_token {
            claims["ath"] = json!(sha256_b64url(token.as_bytes()));
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        self.sign(
            json!({"typ": "dpop+jwt", "jwk": self.public_jwk()}),
            &claims,
        )
    }
}

/// The DER inside a PKCS#8 `PRIVATE KEY` PEM block.
fn pem_der(pem: &str) -> Result<Vec<u8>, String> {
    const BEGIN: &str = "-----BEGIN PRIVATE KEY-----";
    const END: &str = "-----END PRIVATE KEY-----";
    let Some(start) = pem.find(BEGIN) else {
        let hint = if pem.contains("BEGIN EC PRIVATE KEY") || pem.contains("BEGIN RSA PRIVATE KEY")
        {
            "is in the SEC1/PKCS#1 form; convert it with `openssl pkcs8 -topk8 -nocrypt -in KEY \
             -out KEY.p8`"
        } else if pem.contains("BEGIN ENCRYPTED PRIVATE KEY") {
            "is encrypted; keep it decrypted in a file only its owner may read"
        } else {
            "is not a PEM `PRIVATE KEY` (PKCS#8)"
        };
        return Err(format!("the key {hint}"));
    };
    let body = &pem[start + BEGIN.len()..];
    let end = body
        .find(END)
        .ok_or("the PEM `PRIVATE KEY` block has no end line")?;
    let b64: String = body[..end].chars().filter(|c| !c.is_whitespace()).collect();
    STANDARD
        .decode(b64)
        .map_err(|_| "the PEM `PRIVATE KEY` block is not base64".to_owned())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ring::signature::UnparsedPublicKey;

    /// The header and claims of a compact JWS whose signature verifies with
    /// the public key of `key`.
    pub(crate) fn verified(jws: &str, key: &SigningKey) -> (Value, Value) {
        let parts: Vec<&str> = jws.split('.').collect();
        assert_eq!(parts.len(), 3, "{jws}");
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).expect("signature b64");
        let input = format!("{}.{}", parts[0], parts[1]);
        match key {
            SigningKey::Es256(pair) => {
                assert_eq!(signature.len(), 64, "JWS ES256 is r || s");
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, pair.public_key())
                    .verify(input.as_bytes(), &signature)
                    .expect("ES256 signature verifies");
            }
            SigningKey::Rs256(pair) => {
                UnparsedPublicKey::new(
                    &signature::RSA_PKCS1_2048_8192_SHA256,
                    pair.public().as_ref(),
                )
                .verify(input.as_bytes(), &signature)
                .expect("RS256 signature verifies");
            }
        }
        let decode = |part: &str| -> Value {
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).expect("b64")).expect("json")
        };
        (decode(parts[0]), decode(parts[1]))
    }

    /// A PKCS#8 PEM of a fresh P-256 key (as `openssl genpkey` writes one).
    pub(crate) fn es256_pem() -> String {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .expect("generate");
        let b64 = STANDARD.encode(doc.as_ref());
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).expect("ascii"))
            .collect();
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            lines.join("\n")
        )
    }

    #[test]
    fn a_client_assertion_is_a_verifiable_es256_jwt_with_the_rfc_7523_claims() {
        let key = SigningKey::from_pem(&es256_pem()).expect("key");
        assert_eq!(key.alg(), "ES256");
        let jwt = key
            .client_assertion("client-1", "https://as.example")
            .expect("sign");
        let (header, claims) = verified(&jwt, &key);
        assert_eq!(header, json!({"alg": "ES256", "typ": "JWT"}));
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://as.example");
        let iat = claims["iat"].as_u64().expect("iat");
        assert!(iat.abs_diff(now_secs()) <= 5);
        assert_eq!(claims["exp"].as_u64(), Some(iat + 60));
        let jti = claims["jti"].as_str().expect("jti");
        assert_eq!(jti.len(), 22, "128 random bits");
        let again = key
            .client_assertion("client-1", "https://as.example")
            .expect("sign");
        assert_ne!(verified(&again, &key).1["jti"], claims["jti"]);
    }

    #[test]
    fn a_dpop_proof_carries_its_public_key_and_the_request_it_is_for() {
        let key = SigningKey::generate_es256().expect("key");
        let proof = key
            .dpop_proof(
                "POST",
                "https://rs.example/mcp?x=1#f",
                Some("tok"),
                Some("n-1"),
            )
            .expect("proof");
        let (header, claims) = verified(&proof, &key);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        let jwk = &header["jwk"];
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert!(jwk.get("d").is_none(), "no private part");
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(jwk["x"].as_str().unwrap())
                .unwrap()
                .len(),
            32
        );
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(jwk["y"].as_str().unwrap())
                .unwrap()
                .len(),
            32
        );
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://rs.example/mcp");
        assert_eq!(claims["nonce"], "n-1");
        // ath = base64url(SHA-256("tok")).
        assert_eq!(claims["ath"], "GnZ0607njffhrEOak8P6jjyUV4TU3sn9jjARc4svHWI");
        let bare = key
            .dpop_proof("GET", "https://rs.example/mcp", None, None)
            .expect("proof");
        let (_, claims) = verified(&bare, &key);
        assert!(claims.get("ath").is_none() && claims.get("nonce").is_none());
        // RFC 7638 thumbprint input: required members, sorted, no spaces.
        let expected = sha256_b64url(
            format!(
                r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
                jwk["x"].as_str().unwrap(),
                jwk["y"].as_str().unwrap()
            )
            .as_bytes(),
        );
        assert_eq!(key.thumbprint(), expected);
    }

    #[test]
    fn a_key_file_others_may_read_is_refused_and_a_private_one_is_used() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("client.pem");
        std::fs::write(&path, es256_pem()).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let err = SigningKey::from_file(&path).unwrap_err();
        assert!(err.contains("readable by others (mode 644)"), "{err}");
        assert!(err.contains("chmod 600"), "{err}");
        assert!(
            !err.contains("PRIVATE KEY"),
            "the key is never quoted: {err}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        assert!(SigningKey::from_file(&path).is_err(), "group-readable too");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        assert_eq!(SigningKey::from_file(&path).expect("key").alg(), "ES256");
    }

    #[test]
    fn non_pkcs8_keys_are_named_without_being_quoted() {
        let sec1 = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\n-----END EC PRIVATE KEY-----\n";
        let err = SigningKey::from_pem(sec1).unwrap_err();
        assert!(err.contains("openssl pkcs8 -topk8"), "{err}");
        assert!(!err.contains("MHcCAQEEI"), "{err}");
        let junk = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
        assert!(SigningKey::from_pem(junk).unwrap_err().contains("neither"));
    }
}
