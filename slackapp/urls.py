from django.urls import path

from slackapp import views

urlpatterns = [
    path("interactivity", views.interactivity, name="slack-interactivity"),
    path("connect/<str:key>", views.connect, name="slack-connect"),
    path("accounts", views.accounts, name="slack-accounts"),
]
