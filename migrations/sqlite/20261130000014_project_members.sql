-- Collaborators: accounts besides the owner (role 'member') see the
-- projects they are members of, with read or edit rights. The owner sees
-- and changes everything, and alone manages accounts, projects and the
-- LLM settings.
CREATE TABLE project_members (
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    access     TEXT    NOT NULL CHECK (access IN ('read', 'edit')),
    PRIMARY KEY (user_id, project_id)
);
CREATE INDEX project_members_project ON project_members(project_id);
