from django.urls import path

from holds.links import link_views
from holds.pages import assignment, bulk, claiming, decide, hold_page, queue, related_holds, run_and_files

urlpatterns = [
    path("", queue.queue, name="queue"),
    path("holds/next", queue.next_hold, name="next-hold"),
    path("holds/bulk/review", bulk.bulk_review, name="bulk-review"),
    path("holds/bulk/assign", bulk.bulk_assign, name="bulk-assign"),
    path("holds/<int:pk>/", hold_page.hold_detail, name="hold"),
    path("links/<str:token>", link_views.action_link, name="action-link"),
    path("holds/<int:pk>/review", decide.hold_review, name="hold-review"),
    path("holds/<int:pk>/approve", decide.hold_approve, name="hold-approve"),
    path("holds/<int:pk>/approve/undo", decide.approval_undo, name="approval-undo"),
    path("holds/<int:pk>/reject", decide.hold_reject, name="hold-reject"),
    path("holds/<int:pk>/decision", decide.decision_status, name="decision-status"),
    path("holds/<int:pk>/decision/undo", decide.decision_undo, name="decision-undo"),
    path("holds/<int:pk>/assign", assignment.assign_hold, name="assign-hold"),
    path("holds/<int:pk>/unassign", assignment.unassign_hold, name="unassign-hold"),
    path("holds/<int:pk>/notes", assignment.add_note, name="add-note"),
    path("holds/<int:pk>/take-over", claiming.take_over, name="take-over"),
    path("holds/<int:pk>/release", claiming.release, name="release"),
    path("holds/<int:pk>/claim", claiming.claim_hold, name="claim-hold"),
    path("holds/<int:pk>/heartbeat", claiming.hold_heartbeat, name="hold-heartbeat"),
    path("holds/<int:pk>/leave", claiming.leave_hold, name="leave-hold"),
    path("holds/<int:pk>/run", run_and_files.run_context, name="run-context"),
    path("holds/<int:pk>/related", related_holds.related_holds, name="hold-related"),
    path("holds/<int:pk>/files/<path:file_id>", run_and_files.hold_file, name="hold-file"),
]
