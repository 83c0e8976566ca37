from django.urls import path

from holds.links import link_views
from holds.pages import bulk, hold_page

urlpatterns = [
    path("", hold_page.queue, name="queue"),
    path("holds/next", hold_page.next_hold, name="next-hold"),
    path("holds/bulk/review", bulk.bulk_review, name="bulk-review"),
    path("holds/bulk/assign", bulk.bulk_assign, name="bulk-assign"),
    path("holds/<int:pk>/", hold_page.hold_detail, name="hold"),
    path("links/<str:token>", link_views.action_link, name="action-link"),
    path("holds/<int:pk>/review", hold_page.hold_review, name="hold-review"),
    path("holds/<int:pk>/approve", hold_page.hold_approve, name="hold-approve"),
    path("holds/<int:pk>/approve/undo", hold_page.approval_undo, name="approval-undo"),
    path("holds/<int:pk>/reject", hold_page.hold_reject, name="hold-reject"),
    path("holds/<int:pk>/decision", hold_page.decision_status, name="decision-status"),
    path("holds/<int:pk>/decision/undo", hold_page.decision_undo, name="decision-undo"),
    path("holds/<int:pk>/assign", hold_page.assign_hold, name="assign-hold"),
    path("holds/<int:pk>/unassign", hold_page.unassign_hold, name="unassign-hold"),
    path("holds/<int:pk>/notes", hold_page.add_note, name="add-note"),
    path("holds/<int:pk>/take-over", hold_page.take_over, name="take-over"),
    path("holds/<int:pk>/release", hold_page.release, name="release"),
    path("holds/<int:pk>/claim", hold_page.claim_hold, name="claim-hold"),
    path("holds/<int:pk>/heartbeat", hold_page.hold_heartbeat, name="hold-heartbeat"),
    path("holds/<int:pk>/leave", hold_page.leave_hold, name="leave-hold"),
    path("holds/<int:pk>/run", hold_page.run_context, name="run-context"),
    path("holds/<int:pk>/files/<path:file_id>", hold_page.hold_file, name="hold-file"),
]
