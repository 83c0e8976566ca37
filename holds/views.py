"""Views: thin, they read the request, call the modules doing the work and render."""

from django.shortcuts import render

from holds import queue as holds_queue


def queue(request):
    return render(request, "holds/queue.html", {"holds": holds_queue.open_holds()[:100]})
