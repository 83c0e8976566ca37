from django.urls import path

from audit import views

app_name = "audit"

urlpatterns = [
    path("", views.event_list, name="list"),
    path("export.csv", views.export_csv, name="export"),
    path("events/<int:sequence>/", views.event_detail, name="event"),
    path("decisions/<int:pk>/", views.decision_detail, name="decision"),
    path("holds/<int:pk>/", views.hold_timeline, name="hold-timeline"),
    path("stats/", views.statistics, name="stats"),
]
