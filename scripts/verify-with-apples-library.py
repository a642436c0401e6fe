"""Verifies SaveDesk-signed App Store data with Apple's own App Store Server Library.

Usage: verify-with-apples-library.py ROOT_DER BUNDLE_ID TRANSACTION_JWS_FILE NOTIFICATION_JWS_FILE
Prints one JSON line: what Apple's SignedDataVerifier decoded, or the status it refused with.
The test suite (Tests/SaveDeskServerTests/AppleInteropTests.swift) runs it from a throwaway
venv that `make test` creates (pip install app-store-server-library).
"""
import json
import sys

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException


def main() -> int:
    root_path, bundle_id, transaction_path, notification_path = sys.argv[1:5]
    with open(root_path, "rb") as handle:
        root = handle.read()
    # Online (OCSP) checks are off: a local CA has no responder. Everything else is as strict as
    # Apple's own production use: exactly three certificates, X509_STRICT, the marker OIDs.
    verifier = SignedDataVerifier([root], False, Environment.SANDBOX, bundle_id)
    result = {}
    try:
        with open(transaction_path) as handle:
            transaction = verifier.verify_and_decode_signed_transaction(handle.read().strip())
        result["transaction"] = {
            "original_transaction_id": transaction.originalTransactionId,
            "product_id": transaction.productId,
            "bundle_id": transaction.bundleId,
        }
    except VerificationException as error:
        result["transaction_error"] = str(error.status)
    try:
        with open(notification_path) as handle:
            notification = verifier.verify_and_decode_notification(handle.read().strip())
        result["notification"] = {
            "type": notification.rawNotificationType,
            "subtype": notification.rawSubtype,
            "uuid": notification.notificationUUID,
        }
    except VerificationException as error:
        result["notification_error"] = str(error.status)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
