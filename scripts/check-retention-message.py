"""Checks Apple's cancel page exchange with Apple's own code and PyJWT.

Usage: check-retention-message.py ROOT_DER APP_APPLE_ID REQUEST_JWS_FILE RESPONSE_JSON_FILE PUBLIC_KEY_PEM
- the request SaveDesk's local StoreKit CA signed, decoded by Apple's App Store Server Library
  (`SignedDataVerifier.verify_and_decode_realtime_request`, Sandbox, strict X.509);
- SaveDesk's answer, read into the library's `RealtimeResponseBody`;
- its promotional offer's V2 signature, if any, verified by PyJWT with the In-App Purchase key's
  public half (ES256, audience "promotional-offer"), with its header and claims.
Prints one JSON line. Tests/SaveDeskServerTests/RetentionMessagingTests.swift runs it from the venv
`make test` creates (SAVEDESK_TEST_PYTHON).
"""
import json
import sys

import jwt
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
from appstoreserverlibrary.models.RealtimeResponseBody import RealtimeResponseBody
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException


def main() -> int:
    root_path, app_apple_id, request_path, response_path, key_path = sys.argv[1:6]
    with open(root_path, "rb") as handle:
        root = handle.read()
    verifier = SignedDataVerifier([root], False, Environment.SANDBOX, "com.savedesk.reader", int(app_apple_id))
    result = {}
    try:
        with open(request_path) as handle:
            request = verifier.verify_and_decode_realtime_request(handle.read().strip())
        result["request"] = {
            "original_transaction_id": request.originalTransactionId,
            "app_apple_id": request.appAppleId,
            "product_id": request.productId,
            "user_locale": request.userLocale,
            "request_identifier": str(request.requestIdentifier),
            "environment": request.rawEnvironment,
        }
    except VerificationException as error:
        result["request_error"] = str(error.status)
    with open(response_path) as handle:
        body = json.load(handle)
    response = _get_cattrs_converter(RealtimeResponseBody).structure(body, RealtimeResponseBody)
    kinds = [name for name in ("message", "alternateProduct", "promotionalOffer") if getattr(response, name) is not None]
    result["response_kinds"] = kinds
    if response.promotionalOffer is not None:
        signature = response.promotionalOffer.promotionalOfferSignatureV2
        with open(key_path, "rb") as handle:
            key = handle.read()
        try:
            result["claims"] = jwt.decode(signature, key, algorithms=["ES256"], audience="promotional-offer")
            result["header"] = jwt.get_unverified_header(signature)
        except jwt.PyJWTError as error:
            result["signature_error"] = repr(error)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
