//! Where messages go: a webhook (a JSON document, signed with
//! HMAC-SHA256 when a secret is set), an ntfy topic (text with title and
//! tags headers) and e-mail (SMTP with STARTTLS, or TLS from the start for
//! `smtps://`). Each delivery is one attempt; the outbox (`outbox.rs`)
//! retries.

use std::path::PathBuf;
use std::time::Duration;

use hmac::{Hmac, Mac};
use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{SmtpTransport, Transport};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use ureq::Agent;

/// The header of a webhook call's signature: `sha256=` and the hex HMAC
/// of the body with `webhook_secret`.
pub const SIGNATURE_HEADER: &str = "X-AW-Signature-256";

/// How long one delivery may take.
const TIMEOUT: Duration = Duration::from_secs(20);

/// The channels of `[alerts]`, as resolved from the config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Channels {
    /// `webhook_url` and `webhook_secret`.
    pub webhook: Option<Webhook>,
    /// `ntfy_url`: a topic's address.
    pub ntfy: Option<String>,
    /// `smtp_url` and the rest of the e-mail settings.
    pub email: Option<Email>,
}

impl Channels {
    /// The names of the configured channels, in delivery order.
    pub fn names(&self) -> Vec<Channel> {
        let mut names = Vec::new();
        if self.webhook.is_some() {
            names.push(Channel::Webhook);
        }
        if self.ntfy.is_some() {
            names.push(Channel::Ntfy);
        }
        if self.email.is_some() {
            names.push(Channel::Email);
        }
        names
    }

    /// Whether none is configured.
    pub fn is_empty(&self) -> bool {
        self.names().is_empty()
    }
}

/// A webhook receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    /// An `http://` or `https://` address.
    pub url: String,
    /// The key of the body's HMAC-SHA256 signature, if any.
    pub secret: Option<String>,
}

/// How e-mail is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email {
    /// The SMTP server's name, as its certificate names it.
    pub host: String,
    /// Its port (default 587 for `smtp://`, 465 for `smtps://`).
    pub port: u16,
    /// TLS from the first byte (`smtps://`) rather than STARTTLS.
    pub implicit_tls: bool,
    /// The login, if any.
    pub user: Option<String>,
    /// Its password (from the URL or `smtp_password_file`).
    pub password: Option<String>,
    /// `email_from`.
    pub from: String,
    /// `email_to`: one or more addresses.
    pub to: Vec<String>,
    /// A PEM file of the certificate (or its authority) of a server with a
    /// self-signed one; `None`: the public roots.
    pub ca_file: Option<PathBuf>,
}

/// One of the channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    Webhook,
    Ntfy,
    Email,
}

impl Channel {
    /// As the status and the config name it.
    pub fn name(self) -> &'static str {
        match self {
            Channel::Webhook => "webhook",
            Channel::Ntfy => "ntfy",
            Channel::Email => "email",
        }
    }
}

/// What a message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A goal's threshold reached.
    Goal,
    /// A limit's threshold passed.
    Limit,
    /// A period's report.
    Digest,
    /// `POST /api/0/alerts/test`.
    Test,
}

/// A message, as every channel renders it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Unique: a receiver that got a retried call twice can tell.
    pub id: String,
    pub kind: Kind,
    /// One line.
    pub title: String,
    /// Plain text.
    pub text: String,
    /// An HTML rendering of `text` (digests), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    /// The webhook's document: the message's facts (category, minutes,
    /// threshold, day, hosts, or the digest's summary).
    pub details: serde_json::Value,
}

/// Why a delivery failed, for the status and the retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub message: String,
}

impl Failure {
    fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
        }
    }
}

/// Whether `text` is an e-mail address a message can name
/// (`me@example.org` or `Me <me@example.org>`).
pub fn check_address(text: &str) -> Result<(), String> {
    text.parse::<Mailbox>()
        .map(|_| ())
        .map_err(|error| error.to_string())
}

/// Sends `message` to `channel` once.
pub fn deliver(channels: &Channels, channel: Channel, message: &Message) -> Result<(), Failure> {
    match channel {
        Channel::Webhook => match &channels.webhook {
            Some(webhook) => post_webhook(webhook, message),
            None => Err(Failure::new("no webhook_url is configured")),
        },
        Channel::Ntfy => match &channels.ntfy {
            Some(url) => post_ntfy(url, message),
            None => Err(Failure::new("no ntfy_url is configured")),
        },
        Channel::Email => match &channels.email {
            Some(email) => send_email(email, message),
            None => Err(Failure::new("no smtp_url is configured")),
        },
    }
}

fn agent() -> Agent {
    Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into()
}

/// The webhook's body: the message with its facts.
pub fn webhook_body(message: &Message) -> Vec<u8> {
    let document = serde_json::json!({
        "id": message.id,
        "kind": message.kind,
        "title": message.title,
        "text": message.text,
        "details": message.details,
    });
    serde_json::to_vec(&document).unwrap_or_default()
}

/// `sha256=` and the hex HMAC-SHA256 of `body` with `secret`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(body);
    let bytes = mac.finalize().into_bytes();
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256={hex}")
}

fn post_webhook(webhook: &Webhook, message: &Message) -> Result<(), Failure> {
    let body = webhook_body(message);
    let mut request = agent()
        .post(&webhook.url)
        .header("Content-Type", "application/json")
        .header(
            "User-Agent",
            concat!("aw-server/", env!("CARGO_PKG_VERSION")),
        );
    if let Some(secret) = &webhook.secret {
        request = request.header(SIGNATURE_HEADER, signature(secret, &body));
    }
    answered(request.send(&body[..]), "the webhook")
}

fn post_ntfy(url: &str, message: &Message) -> Result<(), Failure> {
    let tags = match message.kind {
        Kind::Goal => "tada",
        Kind::Limit => "warning",
        Kind::Digest => "bar_chart",
        Kind::Test => "white_check_mark",
    };
    let request = agent()
        .post(url)
        .header("Title", header_text(&message.title))
        .header("Tags", tags)
        .header("Content-Type", "text/plain; charset=utf-8");
    answered(request.send(message.text.as_bytes()), "the ntfy server")
}

/// A header's value: ASCII as it is, anything else in RFC 2047's encoded
/// words, which ntfy decodes.
fn header_text(text: &str) -> String {
    if text.is_ascii() && !text.contains(['\r', '\n']) {
        return text.to_string();
    }
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.replace(['\r', '\n'], " "));
    format!("=?UTF-8?B?{encoded}?=")
}

fn answered(
    result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    whom: &str,
) -> Result<(), Failure> {
    let response =
        result.map_err(|error| Failure::new(format!("{whom} did not answer: {error}")))?;
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        return Ok(());
    }
    let body = response
        .into_body()
        .into_with_config()
        .limit(4096)
        .read_to_string()
        .unwrap_or_default();
    let said = body.trim();
    let said: String = said.chars().take(200).collect();
    Err(Failure::new(if said.is_empty() {
        format!("{whom} answered {status}")
    } else {
        format!("{whom} answered {status}: {said}")
    }))
}

fn send_email(email: &Email, message: &Message) -> Result<(), Failure> {
    let mailbox = |text: &str, what: &str| {
        text.parse::<Mailbox>()
            .map_err(|error| Failure::new(format!("{what} '{text}' is not an address: {error}")))
    };
    let mut builder = lettre::Message::builder()
        .from(mailbox(&email.from, "email_from")?)
        .subject(&message.title);
    for to in &email.to {
        builder = builder.to(mailbox(to, "email_to")?);
    }
    let text = SinglePart::builder()
        .header(ContentType::TEXT_PLAIN)
        .body(message.text.clone());
    let built = match &message.html {
        Some(html) => builder.multipart(
            MultiPart::alternative().singlepart(text).singlepart(
                SinglePart::builder()
                    .header(ContentType::TEXT_HTML)
                    .body(html.clone()),
            ),
        ),
        None => builder.singlepart(text),
    }
    .map_err(|error| Failure::new(format!("the message could not be made: {error}")))?;
    let mut tls = TlsParameters::builder(email.host.clone());
    if let Some(path) = &email.ca_file {
        let pem = std::fs::read(path)
            .map_err(|error| Failure::new(format!("smtp_ca_file {}: {error}", path.display())))?;
        let certificate = Certificate::from_pem(&pem)
            .map_err(|error| Failure::new(format!("smtp_ca_file {}: {error}", path.display())))?;
        tls = tls.add_root_certificate(certificate);
    }
    let tls = tls
        .build_rustls()
        .map_err(|error| Failure::new(format!("TLS for {}: {error}", email.host)))?;
    let mut transport = SmtpTransport::builder_dangerous(&email.host)
        .port(email.port)
        .timeout(Some(TIMEOUT))
        .tls(if email.implicit_tls {
            Tls::Wrapper(tls)
        } else {
            Tls::Required(tls)
        });
    if let Some(user) = &email.user {
        transport = transport.credentials(Credentials::new(
            user.clone(),
            email.password.clone().unwrap_or_default(),
        ));
    }
    transport.build().send(&built).map(|_| ()).map_err(|error| {
        Failure::new(format!(
            "the SMTP server {}:{} refused or failed: {error}",
            email.host, email.port
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_hmac_of_the_body_in_hex() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn headers_carry_any_text() {
        assert_eq!(header_text("Limit passed"), "Limit passed");
        assert_eq!(
            header_text("Zeit für Spiele"),
            "=?UTF-8?B?WmVpdCBmw7xyIFNwaWVsZQ==?="
        );
        assert!(!header_text("a\r\nInjected: 1").contains('\n'));
    }
}
