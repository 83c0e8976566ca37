"""One-tap links: the signed, single-use Approve and Reject links of messages (``action_links``) and their
phone-first page (``link_views``)."""
