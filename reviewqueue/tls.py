"""The trust store that outgoing HTTPS checks certificates against: the platform's API and webhooks."""

import ssl

import httpx

from reviewqueue import processcache


@processcache.kept_for_the_process
def trust_store() -> ssl.SSLContext:
    """The store httpx would load for a client of its own (certifi, or SSL_CERT_FILE/SSL_CERT_DIR), once a process.

    Loading it parses every certificate of the bundle, and every sync, delivery task and webhook opens a client
    of its own: loaded per client, that was most of a delivery's CPU. It depends on the process's environment
    alone, which nothing changes while the process runs.
    """
    return httpx.create_ssl_context()
