"""Provider tokens recognisable by their format wherever they appear: a fixed prefix (or a
structure: PEM armour, a bot id and an HMAC, a bech32 string) and a random body. The body
must not be a placeholder (`ghp_xxxx…`, AWS's documented `…EXAMPLE` key); where the
format carries a checksum or an encoding, it is verified."""

from __future__ import annotations

import re
from urllib.parse import unquote

from . import filters as f
from .rules import Rule

_END = r"(?![A-Za-z0-9_\-])"
_START = r"(?<![A-Za-z0-9_\-])"


def _body_ok(m: re.Match[str]) -> bool:
    """The random part (group `b`, else the whole match) is not a placeholder."""
    body = m.group("b") if "b" in m.re.groupindex else m.group(0)
    return not f.is_placeholder(body) and f.entropy(body) >= 2.5


def _random_body(m: re.Match[str]) -> bool:
    body = m.group("b") if "b" in m.re.groupindex else m.group(0)
    return _body_ok(m) and f.char_classes(body.replace("-", "").replace("_", "")) >= 2


def _not_filler(m: re.Match[str]) -> bool:
    """Neither filler (`AKIAXXXXXXXXXXXXXXXX`) nor AWS's documented example keys
    (`AKIAIOSFODNN7EXAMPLE`), which the AWS docs and SDKs print and users paste from them."""
    return _body_ok(m)


def _aws_secret(m: re.Match[str]) -> bool:
    return _not_filler(m) and f.char_classes(m.group("b")) >= 2


def _discord(m: re.Match[str]) -> bool:
    """The first part is the bot's numeric id in base64."""
    raw = f.b64decode(m.group("id"))
    return raw is not None and raw.isdigit() and _body_ok(m)


def _sas_signature(m: re.Match[str]) -> bool:
    """An Azure SAS `sig` is an HMAC-SHA256: 32 bytes once URL- and base64-decoded."""
    raw = f.b64decode(unquote(m.group("b")))
    return raw is not None and len(raw) == 32


def _age(m: re.Match[str]) -> bool:
    return f.bech32_ok(m.group(0)) or _body_ok(m)


def _encoded_pem(m: re.Match[str]) -> bool:
    return f.is_encoded_private_key(m.group(0))


def _pem_body(m: re.Match[str]) -> bool:
    """A key, not the shape of one (`-----BEGIN … PRIVATE KEY-----\n...\n-----END …`)."""
    body = re.sub(r"-----[A-Z0-9 ]+-----", "", m.group(0))
    return sum(len(run) for run in re.findall(r"[A-Za-z0-9+/=]{16,}", body)) >= 64


def _rule(kind: str, pattern: str, anchors: tuple[str, ...], check=_body_ok, group: int | str = 0, flags: int = 0) -> Rule:
    return Rule(kind, re.compile(pattern, flags), group, check, anchors)


_PEM_LABEL = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
FORMAT_RULES: list[Rule] = [
    # -- keys with armour or a structure -------------------------------------------------
    _rule("private_key", _PEM_LABEL + r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)", ("private key",), _pem_body, flags=re.S),
    _rule("private_key", r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{60,}={0,2}", ("ls0tls1crudjti",), _encoded_pem),
    _rule("putty_private_key", r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:[ \t]*[0-9a-fA-F]+|\Z)", ("putty-user-key-file",), None, flags=re.S),
    _rule("age_secret_key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", ("age-secret-key-1",), _age),
    _rule("wireguard_key", r"(?im)^[ \t]*(?:PrivateKey|PresharedKey)[ \t]*=[ \t]*(?P<b>[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=)", ("privatekey", "presharedkey"), group="b"),
    _rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", ("eyj",)),
    # -- cloud providers -----------------------------------------------------------------
    _rule("aws_access_key_id", r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])",
          ("akia", "asia", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "abia", "acca"), _not_filler),
    _rule("aws_secret_access_key",
          r"(?i)\baws[\w.\- ]{0,24}?(?:secret|private)[\w.\- ]{0,24}?[\"']?[ \t]*(?:[=:]|=>|\bis\b)?[ \t]*[\"']?"
          r"(?P<b>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])", ("aws",), _aws_secret, "b"),
    _rule("aws_session_token", r"(?:FwoGZXIvYXdzE|IQoJb3JpZ2lu)[A-Za-z0-9/+=]{80,}", ("fwogzxivyxdze", "iqojb3jpz2lu")),
    _rule("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}", ("aiza",)),
    _rule("google_oauth", r"\bGOCSPX-[A-Za-z0-9_\-]{28}|\bya29\.[A-Za-z0-9_\-]{30,}|(?<![\w/])1//0[A-Za-z0-9_\-]{40,}", ("gocspx-", "ya29.", "1//0")),
    _rule("azure_storage_key", r"(?i)(?:AccountKey|SharedAccessKey)=(?P<b>[A-Za-z0-9+/=]{40,})", ("accountkey=", "sharedaccesskey="), group="b"),
    _rule("azure_sas_token", r"(?i)(?<![\w])sig=(?P<b>[A-Za-z0-9%+/=]{40,90})", ("sig=",), _sas_signature, "b"),
    _rule("azure_client_secret", _START + r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}" + _END, ("q~",)),
    _rule("digitalocean_token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", ("do",)),
    _rule("alibaba_access_key", r"\bLTAI[A-Za-z0-9]{20}\b", ("ltai",), _random_body),
    _rule("cloudflare_origin_ca_key", r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b", ("v1.0-",)),
    _rule("heroku_api_key", r"\bHRKU-[A-Za-z0-9_\-]{20,}", ("hrku-",)),
    # -- code hosting, CI, registries ----------------------------------------------------
    _rule("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b", ("gh", "github_pat_")),
    _rule("gitlab_token", r"\b(?:gl(?:pat|ptt|dt|rt|soat|cbt|ffct|imt|agent|oas|ft|wt)-[A-Za-z0-9_\-]{20,}|GR1348941[A-Za-z0-9_\-]{20,})", ("gl", "gr1348941")),
    _rule("bitbucket_token", r"\bATBB[A-Za-z0-9_=.\-]{24,}", ("atbb",), _random_body),
    _rule("atlassian_api_token", r"\bAT(?:ATT|CTT)3[A-Za-z0-9_\-=]{150,}", ("atatt3", "atctt3")),
    _rule("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    _rule("pypi_token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}", ("pypi-age",)),
    _rule("rubygems_token", r"\brubygems_[a-f0-9]{48}\b", ("rubygems_",)),
    _rule("nuget_key", r"\boy2[a-z0-9]{43}\b", ("oy2",), _random_body),
    _rule("docker_hub_token", r"\bdckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}", ("dckr_",)),
    _rule("terraform_cloud_token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}", (".atlasv1.",)),
    _rule("vault_token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}", ("hvs.", "hvb.", "hvr.")),
    _rule("pulumi_token", r"\bpul-[a-f0-9]{40}\b", ("pul-",)),
    _rule("doppler_token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_\-]{40,}", ("dp.",)),
    _rule("sonar_token", r"\bsq[pua]_[a-f0-9]{40}\b", ("sqp_", "squ_", "sqa_")),
    _rule("buildkite_token", r"\bbkua_[a-f0-9]{40}\b", ("bkua_",)),
    _rule("circleci_token", r"\bCCIPAT_[A-Za-z0-9_]{20,}", ("ccipat_",)),
    _rule("jfrog_token", r"\bAKCp[A-Za-z0-9]{60,}|\bcmVmdGtuOjAxOj[A-Za-z0-9]{40,}", ("akcp", "cmvmdgtuojaxoj")),
    _rule("databricks_token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", ("dapi",)),
    _rule("planetscale_token", r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{32,}", ("pscale_",)),
    _rule("onepassword_token", r"\bops_eyJ[A-Za-z0-9+/=_\-]{100,}", ("ops_eyj",)),
    _rule("grafana_token", r"\bglc_[A-Za-z0-9+/=_\-]{32,}|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\beyJrIjoi[A-Za-z0-9+/=]{40,}", ("glc_", "glsa_", "eyjrijoi")),
    _rule("supabase_token", r"\bsb(?:p|_secret)_[A-Za-z0-9_\-]{32,}", ("sbp_", "sb_secret_")),
    _rule("postman_api_key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", ("pmak-",)),
    _rule("notion_token", r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})\b", ("secret_", "ntn_"), _random_body),
    _rule("linear_api_key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", ("lin_",)),
    _rule("figma_token", r"\bfig[dou]_[A-Za-z0-9_\-]{40,}", ("fig",)),
    _rule("sentry_token", r"\bsntr[ysu]s?_[A-Za-z0-9+/=_\-]{40,}", ("sntr",)),
    _rule("newrelic_key", r"\bNR(?:AK|JS|II)-[A-Za-z0-9]{19,32}\b", ("nrak-", "nrjs-", "nrii-")),
    _rule("dynatrace_token", r"\bdt0[a-z]\d{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b", ("dt0",)),
    _rule("shopify_token", r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b", ("shp",)),
    _rule("dropbox_token", r"\bsl\.(?:u\.)?[A-Za-z0-9_\-]{120,}", ("sl.",)),
    _rule("airtable_token", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", ("pat",)),
    _rule("hubspot_token", r"\bpat-(?:na|eu|ap)\d-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", ("pat-",)),
    _rule("flyio_token", r"\bfo1_[A-Za-z0-9_\-]{40,}|\bFlyV1 fm\d_[A-Za-z0-9+/=_\-]{60,}", ("fo1_", "flyv1 fm")),
    _rule("netlify_render_token", r"\b(?:nfp|rnd|pnu|rdme|tfp|aio|fio-u)_[A-Za-z0-9_\-]{30,}", ("nfp_", "rnd_", "pnu_", "rdme_", "tfp_", "aio_", "fio-u_"), _random_body),
    _rule("contentful_token", r"\bCFPAT-[A-Za-z0-9_\-]{43}\b", ("cfpat-",)),
    _rule("clojars_token", r"\bCLOJARS_[a-z0-9]{60}\b", ("clojars_",)),
    _rule("plaid_token", r"\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", ("access-",)),
    _rule("easypost_key", r"\bEZ[AT]K[a-zA-Z0-9]{54}\b", ("ezak", "eztk")),
    _rule("shippo_token", r"\bshippo_(?:live|test)_[a-f0-9]{40}\b", ("shippo_",)),
    _rule("flutterwave_key", r"\bFLW(?:SECK|PUBK)(?:_TEST)?-[a-h0-9]{32}-X\b", ("flw",)),
    _rule("razorpay_key", r"\brzp_(?:live|test)_[A-Za-z0-9]{14}\b", ("rzp_",)),
    _rule("pagerduty_token", r"(?<![\w+])u\+[A-Za-z0-9_+\-]{18}(?![\w+\-])", ("u+",), _random_body),
    # -- messaging and payments ----------------------------------------------------------
    _rule("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]+", ("hooks.slack.com",)),
    _rule("slack_token", r"\bxox[abposre](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]+", ("xox", "xapp-")),
    _rule("discord_webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{60,}", ("discord",)),
    _rule("discord_bot_token", _START + r"(?P<id>[MNO][A-Za-z0-9_\-]{23,27})\.[A-Za-z0-9_\-]{6}\.(?P<b>[A-Za-z0-9_\-]{27,40})" + _END, (".",), _discord),
    _rule("telegram_bot_token", r"(?<![\w:])\d{8,10}:AA[A-Za-z0-9_\-]{33}" + _END, (":aa",)),
    _rule("twilio_api_key", r"\bSK[0-9a-f]{32}\b", ("sk",), _random_body),
    _rule("sendgrid_api_key", r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", ("sg.",)),
    _rule("brevo_api_key", r"\bx(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}\b", ("xkeysib-", "xsmtpsib-")),
    _rule("mailgun_api_key", r"\bkey-[0-9a-f]{32}\b", ("key-",), _random_body),
    _rule("mailchimp_api_key", r"\b[0-9a-f]{32}-us\d{1,2}\b", ("-us",), _random_body),
    _rule("stripe_webhook_secret", r"\bwhsec_[A-Za-z0-9+/=]{24,}", ("whsec_",)),
    _rule("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", ("_live_", "_test_")),
    _rule("square_token", r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}", ("sq0",)),
    _rule("paypal_braintree_token", r"\baccess_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}\b", ("access_token$",)),
    _rule("facebook_token", r"\bEAA[A-Za-z0-9]{80,}", ("eaa",), _random_body),
    _rule("twitter_bearer_token", r"\bA{22}[A-Za-z0-9%]{60,}", ("aaaaaaaaaaaaaaaaaaaaaa",)),
    _rule("mapbox_secret_token", r"\bsk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}", ("sk.eyj",)),
    # -- AI providers --------------------------------------------------------------------
    _rule("anthropic_api_key", r"\bsk-ant-[A-Za-z0-9]{2,8}-[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    _rule("openai_api_key", r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?(?P<b>[A-Za-z0-9_\-]{20,})", ("sk-",), _random_body),
    _rule("huggingface_token", r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}", ("hf_", "api_org_")),
    _rule("ai_provider_key", r"\b(?:gsk_[A-Za-z0-9]{40,}|pplx-[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}|pcsk_[A-Za-z0-9_]{40,}|r8_[A-Za-z0-9]{30,}|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}|fw_[A-Za-z0-9]{20,})\b",
          ("gsk_", "pplx-", "xai-", "pcsk_", "r8_", "lsv2_", "fw_"), _random_body),
]
