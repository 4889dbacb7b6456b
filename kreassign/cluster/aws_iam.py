"""AWS MSK IAM: the properties of AWS's documentation (``aws-msk-iam-auth`` for Java) as OAUTHBEARER tokens.

Both of AWS's Java setups are taken unchanged:

* ``sasl.mechanism=AWS_MSK_IAM``, ``software.amazon.msk.auth.iam.IAMLoginModule`` in ``sasl.jaas.config``,
  ``sasl.client.callback.handler.class=software.amazon.msk.auth.iam.IAMClientCallbackHandler``;
* ``sasl.mechanism=OAUTHBEARER`` with ``OAuthBearerLoginModule`` and
  ``software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler`` as the login (and client) callback handler.

The JAAS options ``awsProfileName``, ``awsRoleArn``, ``awsRoleSessionName``, ``awsStsRegion`` choose the
credentials (the default AWS chain without them). MSK's IAM listeners take OAUTHBEARER with a token signed by
AWS's signer library (``aws-msk-iam-sasl-signer-python``, the ``kreassign[aws]`` extra), which both of
kreassign's clients send. The region is the one in the bootstrap host name (``...kafka.<region>.amazonaws.com``),
else the AWS configuration's (``AWS_REGION``, the profile). MSK cannot be reached from kreassign's tests: they
check the token the signer produces (its action, region and expiry), from a profile and from a role.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlparse

from kreassign.cluster.oauth_tokens import Token, TokenSource, login_failure
from kreassign.errors import ConfigError

IAM_LOGIN_MODULE = "software.amazon.msk.auth.iam.IAMLoginModule"
IAM_HANDLERS = (
    "software.amazon.msk.auth.iam.IAMClientCallbackHandler",
    "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler",
)
EXTRA = "pip install 'kreassign[aws]'"
_REGION_IN_HOST = re.compile(r"\.kafka(?:-serverless)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")


def region_of(bootstrap: str) -> str | None:
    """The region in an MSK bootstrap host name, if any."""
    for entry in bootstrap.split(","):
        host = entry.strip().rsplit(":", 1)[0].lower()
        match = _REGION_IN_HOST.search(host)
        if match:
            return match.group(1)
    return None


class AwsIamTokens(TokenSource):
    """Signed ``kafka-cluster:Connect`` URLs (15 minutes each) from the AWS signer library."""

    what = "AWS MSK IAM token"

    def __init__(self, options: Mapping[str, str], refresh: Mapping[str, float] | None = None) -> None:
        super().__init__(refresh)
        self.profile = (options.get("awsProfileName") or "").strip() or None
        self.role_arn = (options.get("awsRoleArn") or "").strip() or None
        self.session_name = (options.get("awsRoleSessionName") or "").strip() or "MSKSASLDefaultSession"
        self.sts_region = (options.get("awsStsRegion") or "").strip() or None
        self.region: str | None = None
        signer()  # the extra is installed, or one line saying which to install

    def for_bootstrap(self, bootstrap: str) -> AwsIamTokens:
        self.region = region_of(bootstrap)
        return self

    def _fetch(self) -> Token:
        import botocore.exceptions

        provider = signer()
        try:
            region = self.region or self._configured_region()
            if self.role_arn:
                value, expires_ms = provider.generate_auth_token_from_credentials_provider(
                    region, self._role_provider()
                )
            elif self.profile:
                value, expires_ms = provider.generate_auth_token_from_profile(region, self.profile)
            else:
                value, expires_ms = provider.generate_auth_token(region)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError, ValueError, AttributeError) as exc:
            raise login_failure(
                f"The AWS MSK IAM token could not be made: {exc}",
                "Check the AWS credentials kreassign finds (awsProfileName, awsRoleArn in sasl.jaas.config, "
                "AWS_PROFILE, ~/.aws/credentials) and the region (AWS_REGION).",
            ) from None
        return Token(value, expires_ms / 1000.0, self.role_arn or self.profile or "aws-msk-iam")

    def _configured_region(self) -> str:
        import botocore.session

        session = botocore.session.Session(profile=self.profile) if self.profile else botocore.session.Session()
        region = session.get_config_variable("region")
        if not region:
            raise ValueError(
                "no AWS region: the bootstrap host names none (…kafka.<region>.amazonaws.com); set AWS_REGION"
            )
        return region

    def _role_provider(self) -> Any:
        """Credentials of ``awsRoleArn``, assumed with the profile's (or the default) credentials through STS
        (``awsStsRegion``'s regional endpoint, or ``AWS_ENDPOINT_URL_STS``)."""
        import boto3
        from botocore.credentials import CredentialProvider, Credentials

        session = boto3.session.Session(profile_name=self.profile) if self.profile else boto3.session.Session()
        client = session.client("sts", region_name=self.sts_region or session.region_name or "us-east-1")
        role, name = self.role_arn, self.session_name

        class AssumedRole(CredentialProvider):
            METHOD = "kreassign-assume-role"

            def load(self) -> Credentials:
                answer = client.assume_role(RoleArn=role, RoleSessionName=name)["Credentials"]
                return Credentials(answer["AccessKeyId"], answer["SecretAccessKey"], answer["SessionToken"])

        return AssumedRole()


def signer() -> Any:
    try:
        from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
    except ImportError:
        raise ConfigError(f"AWS MSK IAM needs the AWS signer library, which is not installed: {EXTRA}") from None
    return MSKAuthTokenProvider


def describe_token(token: str) -> dict[str, Any]:
    """What a signed token says: its action, region, expiry in seconds and signing time (for tests and hints)."""
    url = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    query = {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}
    credential = query.get("X-Amz-Credential", "").split("/")
    signed = time.strptime(query["X-Amz-Date"], "%Y%m%dT%H%M%SZ") if "X-Amz-Date" in query else None
    return {
        "host": urlparse(url).hostname,
        "action": query.get("Action"),
        "region": credential[2] if len(credential) > 2 else None,
        "service": credential[3] if len(credential) > 3 else None,
        "expires_s": int(query.get("X-Amz-Expires", "0")),
        "signed_at": signed,
        "access_key": credential[0] if credential else None,
    }
