from django.urls import path

from holds import bulk_views, link_views, views

urlpatterns = [
    path("", views.queue, name="queue"),
    path("holds/next", views.next_hold, name="next-hold"),
    path("holds/bulk/review", bulk_views.bulk_review, name="bulk-review"),
    path("holds/bulk/assign", bulk_views.bulk_assign, name="bulk-assign"),
    path("holds/<int:pk>/", views.hold_detail, name="hold"),
    path("links/<str:token>", link_views.action_link, name="action-link"),
    path("holds/<int:pk>/review", views.hold_review, name="hold-review"),
    path("holds/<int:pk>/approve", views.hold_approve, name="hold-approve"),
    path("holds/<int:pk>/approve/undo", views.approval_undo, name="approval-undo"),
    path("holds/<int:pk>/reject", views.hold_reject, name="hold-reject"),
    path("holds/<int:pk>/decision", views.decision_status, name="decision-status"),
    path("holds/<int:pk>/decision/undo", views.decision_undo, name="decision-undo"),
    path("holds/<int:pk>/assign", views.assign_hold, name="assign-hold"),
    path("holds/<int:pk>/unassign", views.unassign_hold, name="unassign-hold"),
    path("holds/<int:pk>/notes", views.add_note, name="add-note"),
    path("holds/<int:pk>/take-over", views.take_over, name="take-over"),
    path("holds/<int:pk>/release", views.release, name="release"),
    path("holds/<int:pk>/claim", views.claim_hold, name="claim-hold"),
    path("holds/<int:pk>/heartbeat", views.hold_heartbeat, name="hold-heartbeat"),
    path("holds/<int:pk>/leave", views.leave_hold, name="leave-hold"),
    path("holds/<int:pk>/run", views.run_context, name="run-context"),
    path("holds/<int:pk>/files/<path:file_id>", views.hold_file, name="hold-file"),
]
