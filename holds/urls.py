from django.urls import path

from holds import views

urlpatterns = [
    path("", views.queue, name="queue"),
    path("holds/next", views.next_hold, name="next-hold"),
    path("holds/<int:pk>/", views.hold_detail, name="hold"),
    path("holds/<int:pk>/review", views.hold_review, name="hold-review"),
    path("holds/<int:pk>/decision", views.decision_status, name="decision-status"),
    path("holds/<int:pk>/take-over", views.take_over, name="take-over"),
    path("holds/<int:pk>/release", views.release, name="release"),
    path("holds/<int:pk>/run", views.run_context, name="run-context"),
    path("holds/<int:pk>/files/<path:file_id>", views.hold_file, name="hold-file"),
]
