"""What happens to holds with time, beside a decision: closing holds past their expiry and reminding before it
(``expiry``), announcing at once the urgent holds a sync first saw (``arrivals``), and noting when the periodic tasks
last ran, so the queue can tell when beat has stopped (``heartbeat``)."""
